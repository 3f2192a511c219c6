/* Stand-in for generated/soc.h: the Colorlight i5's flash layout (platforms/colorlight_i5.py);
 * LITEDAV_TEST_STOREFLASH: with the store flash (platforms/store_flash.py: its module's size
 * is the only size the firmware has of it when it has no window). */
#ifndef LITEDAV_TEST_LITESPI_SOC_H
#define LITEDAV_TEST_LITESPI_SOC_H

#if defined(LITEDAV_TEST_STOREFLASH_WINDOW) && !defined(LITEDAV_TEST_STOREFLASH)
#error "LITEDAV_TEST_STOREFLASH_WINDOW is a variant of LITEDAV_TEST_STOREFLASH"
#endif

#define CONFIG_CLOCK_FREQUENCY 75000000
#define SPIFLASH_PHY_FREQUENCY 18750000
#define SPIFLASH_MODULE_NAME "gd25q16"
#define SPIFLASH_MODULE_TOTAL_SIZE 2097152
#define SPIFLASH_MODULE_PAGE_SIZE 256
#define LITEDAV_FLASH_STORE_BASE (SPIFLASH_BASE + 0x180000)
#define LITEDAV_FLASH_STORE_SIZE 0x80000

#ifdef LITEDAV_TEST_STOREFLASH
#define STOREFLASH_PHY_FREQUENCY 18750000
#define STOREFLASH_MODULE_NAME "mt25ql256"
#define STOREFLASH_MODULE_TOTAL_SIZE 33554432
#define STOREFLASH_MODULE_PAGE_SIZE 256
#define LITEDAV_STOREFLASH 1
#endif
#endif
