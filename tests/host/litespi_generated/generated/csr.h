/* Stand-in for a LiteSPI SoC's generated/csr.h on the host (tests/host/test_litespi_flash.c):
 * the master's CSR addresses and field offsets as LiteX generates them for litespi 2024.12 (the
 * Colorlight i5's build), the accessors as LiteX writes them, over csr_read_simple() and
 * csr_write_simple() (hw/common.h's on the SoC) that the test's chip models implement.
 * LITEDAV_TEST_STOREFLASH: the SoC has the store flash's core `storeflash` too
 * (platforms/store_flash.py), master only (with_mmap=False: its first CSR is the master's
 * cs); with LITEDAV_TEST_STOREFLASH_WINDOW, with LiteSPI's mmap as well (its dummy_bits CSR
 * first, as the boot chip's core has). */
#ifndef LITEDAV_TEST_LITESPI_CSR_H
#define LITEDAV_TEST_LITESPI_CSR_H
#include <generated/soc.h>
#include <stdint.h>

void csr_write_simple(unsigned long v, unsigned long a);
unsigned long csr_read_simple(unsigned long a);

#define CSR_BASE 0xf0000000L

#define CSR_SPIFLASH_CORE_BASE (CSR_BASE + 0x2800L)
#define CSR_SPIFLASH_CORE_MASTER_CS_ADDR (CSR_BASE + 0x2804L)
#define CSR_SPIFLASH_CORE_MASTER_PHYCONFIG_ADDR (CSR_BASE + 0x2808L)
#define CSR_SPIFLASH_CORE_MASTER_RXTX_ADDR (CSR_BASE + 0x280cL)
#define CSR_SPIFLASH_CORE_MASTER_STATUS_ADDR (CSR_BASE + 0x2810L)
#define CSR_SPIFLASH_CORE_MASTER_PHYCONFIG_LEN_OFFSET 0
#define CSR_SPIFLASH_CORE_MASTER_PHYCONFIG_WIDTH_OFFSET 8
#define CSR_SPIFLASH_CORE_MASTER_PHYCONFIG_MASK_OFFSET 16
#define CSR_SPIFLASH_CORE_MASTER_STATUS_TX_READY_OFFSET 0
#define CSR_SPIFLASH_CORE_MASTER_STATUS_RX_READY_OFFSET 1

static inline void spiflash_core_master_cs_write(uint32_t v) { csr_write_simple(v, CSR_SPIFLASH_CORE_MASTER_CS_ADDR); }
static inline void spiflash_core_master_phyconfig_write(uint32_t v) { csr_write_simple(v, CSR_SPIFLASH_CORE_MASTER_PHYCONFIG_ADDR); }
static inline void spiflash_core_master_rxtx_write(uint32_t v) { csr_write_simple(v, CSR_SPIFLASH_CORE_MASTER_RXTX_ADDR); }
static inline uint32_t spiflash_core_master_rxtx_read(void) { return csr_read_simple(CSR_SPIFLASH_CORE_MASTER_RXTX_ADDR); }
static inline uint32_t spiflash_core_master_status_read(void) { return csr_read_simple(CSR_SPIFLASH_CORE_MASTER_STATUS_ADDR); }

#ifdef LITEDAV_TEST_STOREFLASH
#define CSR_STOREFLASH_CORE_BASE (CSR_BASE + 0x3800L)
#ifdef LITEDAV_TEST_STOREFLASH_WINDOW
#define CSR_STOREFLASH_CORE_MMAP_DUMMY_BITS_ADDR (CSR_BASE + 0x3800L)
#define CSR_STOREFLASH_CORE_MASTER_CS_ADDR (CSR_BASE + 0x3804L)
#define CSR_STOREFLASH_CORE_MASTER_PHYCONFIG_ADDR (CSR_BASE + 0x3808L)
#define CSR_STOREFLASH_CORE_MASTER_RXTX_ADDR (CSR_BASE + 0x380cL)
#define CSR_STOREFLASH_CORE_MASTER_STATUS_ADDR (CSR_BASE + 0x3810L)
#else
#define CSR_STOREFLASH_CORE_MASTER_CS_ADDR (CSR_BASE + 0x3800L)
#define CSR_STOREFLASH_CORE_MASTER_PHYCONFIG_ADDR (CSR_BASE + 0x3804L)
#define CSR_STOREFLASH_CORE_MASTER_RXTX_ADDR (CSR_BASE + 0x3808L)
#define CSR_STOREFLASH_CORE_MASTER_STATUS_ADDR (CSR_BASE + 0x380cL)
#endif
#define CSR_STOREFLASH_CORE_MASTER_PHYCONFIG_LEN_OFFSET 0
#define CSR_STOREFLASH_CORE_MASTER_PHYCONFIG_WIDTH_OFFSET 8
#define CSR_STOREFLASH_CORE_MASTER_PHYCONFIG_MASK_OFFSET 16
#define CSR_STOREFLASH_CORE_MASTER_STATUS_TX_READY_OFFSET 0
#define CSR_STOREFLASH_CORE_MASTER_STATUS_RX_READY_OFFSET 1

static inline void storeflash_core_master_cs_write(uint32_t v) { csr_write_simple(v, CSR_STOREFLASH_CORE_MASTER_CS_ADDR); }
static inline void storeflash_core_master_phyconfig_write(uint32_t v) { csr_write_simple(v, CSR_STOREFLASH_CORE_MASTER_PHYCONFIG_ADDR); }
static inline void storeflash_core_master_rxtx_write(uint32_t v) { csr_write_simple(v, CSR_STOREFLASH_CORE_MASTER_RXTX_ADDR); }
static inline uint32_t storeflash_core_master_rxtx_read(void) { return csr_read_simple(CSR_STOREFLASH_CORE_MASTER_RXTX_ADDR); }
static inline uint32_t storeflash_core_master_status_read(void) { return csr_read_simple(CSR_STOREFLASH_CORE_MASTER_STATUS_ADDR); }
#endif

#endif
