/* Stand-in for generated/soc.h: the Colorlight i5's flash layout (platforms/colorlight_i5.py). */
#ifndef LITEDAV_TEST_LITESPI_SOC_H
#define LITEDAV_TEST_LITESPI_SOC_H

#define CONFIG_CLOCK_FREQUENCY 75000000
#define SPIFLASH_MODULE_NAME "gd25q16"
#define LITEDAV_FLASH_STORE_BASE (SPIFLASH_BASE + 0x180000)
#define LITEDAV_FLASH_STORE_SIZE 0x80000
#endif
