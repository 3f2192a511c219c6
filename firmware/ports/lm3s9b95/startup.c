/* Reset and exception entry for the LM3S9B95 (and QEMU's lm3s6965evb): the
 * vector table, .data/.bss set-up, and fault handlers that report on the
 * console instead of spinning silently. No vendor code. */
#include <stdint.h>
#include <string.h>

#include "lm3s_port.h"
#include "lm3s_regs.h"

/* linker script symbols (lm3s_sections.ld) */
extern uint32_t __data_load[], __data_start[], __data_end[], __bss_start[], __bss_end[];
extern uint32_t __stack_top[];

int main(void);
void SysTick_Handler(void);
void Ethernet_Handler(void);

void Reset_Handler(void) __attribute__((noreturn));
void Reset_Handler(void)
{
    uint32_t *src = __data_load, *dst = __data_start;
    while (dst < __data_end)
        *dst++ = *src++;
    for (dst = __bss_start; dst < __bss_end; dst++)
        *dst = 0;
    (void)main();
    lm3s_fatal("main returned");
}

/* A fault: the stacked PC says where. Cortex-M pushes r0-r3, r12, lr, pc, xpsr. */
static void fault(const char *what, const uint32_t *frame)
{
    lm3s_console_printf("\n%s at pc=0x%08lx lr=0x%08lx\n", what, (unsigned long)frame[6],
                        (unsigned long)frame[5]);
    lm3s_fatal("fault");
}

#define FAULT_ENTRY(name, text)                                                        \
    __attribute__((used)) static void name##_c(const uint32_t *frame) { fault(text, frame); } \
    __attribute__((naked)) void name(void)                                             \
    {                                                                                  \
        __asm__ volatile("tst lr, #4\n"                                                \
                         "ite eq\n"                                                    \
                         "mrseq r0, msp\n"                                             \
                         "mrsne r0, psp\n"                                             \
                         "b " #name "_c\n");                                           \
    }

FAULT_ENTRY(HardFault_Handler, "hard fault")
FAULT_ENTRY(MemManage_Handler, "memory management fault")
FAULT_ENTRY(BusFault_Handler, "bus fault")
FAULT_ENTRY(UsageFault_Handler, "usage fault")

static void Unexpected_Handler(void)
{
    lm3s_fatal("unexpected interrupt");
}

#define IRQ_COUNT 54   /* LM3S9B95 peripheral interrupts */
#define IRQ_ETHERNET 42

typedef void (*vector_fn)(void);
struct vector_table {
    uint32_t *initial_sp;
    vector_fn core[15];
    vector_fn irq[IRQ_COUNT];
};

/* every interrupt is unexpected but the few named after the range */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
__attribute__((section(".isr_vector"), used)) const struct vector_table vector_table = {
    .initial_sp = __stack_top,
    .core = {
        Reset_Handler,       /* 1 reset */
        Unexpected_Handler,  /* 2 NMI */
        HardFault_Handler,   /* 3 */
        MemManage_Handler,   /* 4 */
        BusFault_Handler,    /* 5 */
        UsageFault_Handler,  /* 6 */
        0, 0, 0, 0,          /* 7-10 reserved */
        Unexpected_Handler,  /* 11 SVCall */
        Unexpected_Handler,  /* 12 debug monitor */
        0,                   /* 13 reserved */
        Unexpected_Handler,  /* 14 PendSV */
        SysTick_Handler,     /* 15 SysTick */
    },
    .irq = {
        [0 ... IRQ_COUNT - 1] = Unexpected_Handler,
        [IRQ_ETHERNET] = Ethernet_Handler,
    },
};
#pragma GCC diagnostic pop
