/* The few LM3S9B95 / Cortex-M3 registers this port touches (addresses and
 * bits from the LM3S9B95 data sheet and the ARMv7-M architecture manual). */
#ifndef LITEDAV_LM3S_REGS_H
#define LITEDAV_LM3S_REGS_H

#include <stdint.h>

#define REG32(addr) (*(volatile uint32_t *)(uintptr_t)(addr))

/* ---- System control ------------------------------------------------------ */
#define SYSCTL_RIS        REG32(0x400FE050u)
#define SYSCTL_RIS_PLLLRIS (1u << 6)      /* PLL locked */
#define SYSCTL_RCC        REG32(0x400FE060u)
#define SYSCTL_RCC_MOSCDIS   (1u << 0)
#define SYSCTL_RCC_OSCSRC_M  (3u << 4)
#define SYSCTL_RCC_XTAL_M    (0x1Fu << 6)
#define SYSCTL_RCC_XTAL_16MHZ (0x15u << 6)
#define SYSCTL_RCC_BYPASS    (1u << 11)
#define SYSCTL_RCC_PWRDN     (1u << 13)
#define SYSCTL_RCC_USESYSDIV (1u << 22)
#define SYSCTL_RCC2       REG32(0x400FE070u)
#define SYSCTL_RCC2_OSCSRC2_M (7u << 4)
#define SYSCTL_RCC2_BYPASS2  (1u << 11)
#define SYSCTL_RCC2_PWRDN2   (1u << 13)
#define SYSCTL_RCC2_SYSDIV2LSB (1u << 22)
#define SYSCTL_RCC2_SYSDIV2_SHIFT 23
#define SYSCTL_RCC2_SYSDIV2_M (0x3Fu << 23)
#define SYSCTL_RCC2_DIV400   (1u << 30)
#define SYSCTL_RCC2_USERCC2  (1u << 31)
#define SYSCTL_RCGC1      REG32(0x400FE104u)
#define SYSCTL_RCGC1_UART0   (1u << 0)
#define SYSCTL_RCGC2      REG32(0x400FE108u)
#define SYSCTL_RCGC2_GPIOA   (1u << 0)
#define SYSCTL_RCGC2_GPIOF   (1u << 5)
#define SYSCTL_RCGC2_EMAC0   (1u << 28)
#define SYSCTL_RCGC2_EPHY0   (1u << 30)

/* ---- GPIO port A (UART0 on PA0/PA1) --------------------------------------- */
#define GPIOA_BASE        0x40004000u
#define GPIO_AFSEL(base)  REG32((base) + 0x420u)
#define GPIO_DEN(base)    REG32((base) + 0x51Cu)
#define GPIO_PCTL(base)   REG32((base) + 0x52Cu)

/* ---- UART0 (PL011-like) --------------------------------------------------- */
#define UART0_BASE        0x4000C000u
#define UART0_DR          REG32(UART0_BASE + 0x000u)
#define UART0_FR          REG32(UART0_BASE + 0x018u)
#define UART_FR_RXFE        (1u << 4)
#define UART_FR_TXFF        (1u << 5)
#define UART0_IBRD        REG32(UART0_BASE + 0x024u)
#define UART0_FBRD        REG32(UART0_BASE + 0x028u)
#define UART0_LCRH        REG32(UART0_BASE + 0x02Cu)
#define UART_LCRH_FEN       (1u << 4)
#define UART_LCRH_WLEN8     (3u << 5)
#define UART0_CTL         REG32(UART0_BASE + 0x030u)
#define UART_CTL_UARTEN     (1u << 0)
#define UART_CTL_TXE        (1u << 8)
#define UART_CTL_RXE        (1u << 9)

/* ---- Ethernet controller (MAC + PHY) -------------------------------------- */
#define EMAC_BASE         0x40048000u
#define MAC_RIS           REG32(EMAC_BASE + 0x000u)   /* read: raw status; write: MACIACK */
#define MAC_IACK          REG32(EMAC_BASE + 0x000u)
#define MAC_IM            REG32(EMAC_BASE + 0x004u)
#define MAC_INT_RX          (1u << 0)
#define MAC_INT_TXER        (1u << 1)
#define MAC_INT_TXEMP       (1u << 2)
#define MAC_INT_FOV         (1u << 3)
#define MAC_INT_RXER        (1u << 4)
#define MAC_INT_MD          (1u << 5)
#define MAC_INT_PHY         (1u << 6)
#define MAC_RCTL          REG32(EMAC_BASE + 0x008u)
#define MAC_RCTL_RXEN       (1u << 0)
#define MAC_RCTL_AMUL       (1u << 1)
#define MAC_RCTL_PRMS       (1u << 2)
#define MAC_RCTL_BADCRC     (1u << 3)
#define MAC_RCTL_RSTFIFO    (1u << 4)
#define MAC_TCTL          REG32(EMAC_BASE + 0x00Cu)
#define MAC_TCTL_TXEN       (1u << 0)
#define MAC_TCTL_PADEN      (1u << 1)
#define MAC_TCTL_CRC        (1u << 2)
#define MAC_TCTL_DUPLEX     (1u << 4)
#define MAC_DATA          REG32(EMAC_BASE + 0x010u)
#define MAC_IA0           REG32(EMAC_BASE + 0x014u)
#define MAC_IA1           REG32(EMAC_BASE + 0x018u)
#define MAC_MCTL          REG32(EMAC_BASE + 0x020u)   /* MII management */
#define MAC_MCTL_START      (1u << 0)
#define MAC_MCTL_WRITE      (1u << 1)
#define MAC_MCTL_REGADR_SHIFT 3
#define MAC_MDV           REG32(EMAC_BASE + 0x024u)
#define MAC_MRXD          REG32(EMAC_BASE + 0x030u)
#define MAC_NP            REG32(EMAC_BASE + 0x034u)   /* frames in the RX FIFO */
#define MAC_NP_M            0x3Fu
#define MAC_TR            REG32(EMAC_BASE + 0x038u)
#define MAC_TR_NEWTX        (1u << 0)
#define MAC_FIFO_BYTES      2048u                      /* RX and TX FIFO size each */
#define PHY_MR1_STATUS      1u                         /* MII status register */
#define PHY_MR1_LINK        (1u << 2)

/* The Cortex-M3 core's own registers: ../cortex_m/cortex_m.h. */

#endif
