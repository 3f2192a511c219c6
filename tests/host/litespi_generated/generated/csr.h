/* Stand-in for a LiteSPI SoC's generated/csr.h on the host (tests/host/test_litespi_flash.c):
 * the master's field offsets as LiteX generates them for litespi 2024.12, the accessors
 * implemented by the test's chip model. */
#ifndef LITEDAV_TEST_LITESPI_CSR_H
#define LITEDAV_TEST_LITESPI_CSR_H
#include <stdint.h>

#define CSR_SPIFLASH_CORE_BASE 0xf0002000L
#define CSR_SPIFLASH_CORE_MASTER_PHYCONFIG_LEN_OFFSET 0
#define CSR_SPIFLASH_CORE_MASTER_PHYCONFIG_WIDTH_OFFSET 8
#define CSR_SPIFLASH_CORE_MASTER_PHYCONFIG_MASK_OFFSET 16
#define CSR_SPIFLASH_CORE_MASTER_STATUS_TX_READY_OFFSET 0
#define CSR_SPIFLASH_CORE_MASTER_STATUS_RX_READY_OFFSET 1

void spiflash_core_master_cs_write(uint32_t v);
void spiflash_core_master_phyconfig_write(uint32_t v);
void spiflash_core_master_rxtx_write(uint32_t v);
uint32_t spiflash_core_master_rxtx_read(void);
uint32_t spiflash_core_master_status_read(void);

#endif
