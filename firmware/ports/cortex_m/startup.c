/* Reset and exception entry for the Cortex-M3 ports: the core's part of the
 * vector table, .data/.bss set-up, and fault handlers that report on the
 * console instead of spinning silently. The port's interrupt vectors follow
 * in section .isr_vector_irq (sections.ld puts them right after these). No
 * vendor code. */
#include <stdint.h>
#include <string.h>

#include "cortex_m.h"

/* linker script symbols (sections.ld) */
extern uint32_t __data_load[], __data_start[], __data_end[], __bss_start[], __bss_end[];
extern uint32_t __stack_top[];

int main(void);
void SysTick_Handler(void);   /* core.c */

void Reset_Handler(void) __attribute__((noreturn));
void Reset_Handler(void)
{
    uint32_t *src = __data_load, *dst = __data_start;
    while (dst < __data_end)
        *dst++ = *src++;
    for (dst = __bss_start; dst < __bss_end; dst++)
        *dst = 0;
    (void)main();
    cortex_m_fatal("main returned");
}

/* A fault: the stacked PC says where. Cortex-M pushes r0-r3, r12, lr, pc, xpsr. */
static void fault(const char *what, const uint32_t *frame)
{
    cortex_m_printf("\n%s at pc=0x%08lx lr=0x%08lx\n", what, (unsigned long)frame[6],
                    (unsigned long)frame[5]);
    cortex_m_fatal("fault");
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

struct core_vectors {
    uint32_t *initial_sp;
    cortex_m_vector core[15];
};

__attribute__((section(".isr_vector"), used)) const struct core_vectors core_vectors = {
    .initial_sp = __stack_top,
    .core = {
        Reset_Handler,            /* 1 reset */
        cortex_m_unexpected_irq,  /* 2 NMI */
        HardFault_Handler,        /* 3 */
        MemManage_Handler,        /* 4 */
        BusFault_Handler,         /* 5 */
        UsageFault_Handler,       /* 6 */
        0, 0, 0, 0,               /* 7-10 reserved */
        cortex_m_unexpected_irq,  /* 11 SVCall */
        cortex_m_unexpected_irq,  /* 12 debug monitor */
        0,                        /* 13 reserved */
        cortex_m_unexpected_irq,  /* 14 PendSV */
        SysTick_Handler,          /* 15 SysTick */
    },
};
