/* Stand-in for generated/mem.h: the memory-mapped windows are the test's chip arrays.
 * LITEDAV_TEST_STOREFLASH: the store flash's window too (32 MiB, platforms/store_flash.py). */
#ifndef LITEDAV_TEST_LITESPI_MEM_H
#define LITEDAV_TEST_LITESPI_MEM_H
#include <stdint.h>

extern uint8_t model_chip[];
#define SPIFLASH_BASE ((uintptr_t)model_chip)
#define SPIFLASH_SIZE 0x00200000

#ifdef LITEDAV_TEST_STOREFLASH
extern uint8_t model_store_chip[];
#define STOREFLASH_BASE ((uintptr_t)model_store_chip)
#define STOREFLASH_SIZE 0x02000000
#endif
#endif
