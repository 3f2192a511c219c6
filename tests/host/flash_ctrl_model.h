/* A software model of the Stellaris LM3S9B95 flash controller and its 256 KiB
 * flash array, for testing firmware/ports/lm3s9b95/internal_flash.c on the
 * host (compiled with -DINTERNAL_FLASH_HOST_MODEL, the driver's register
 * accessors call the functions below).
 *
 * Written from the data sheet's description, independently of the driver:
 *   - FMC/FMC2 act only with the write key 0xA442 in bits 31:16; any other
 *     key leaves everything unchanged;
 *   - FMC WRITE programs FMD into the word at FMA (word-aligned): the word
 *     becomes old AND data (NOR: bits only go from 1 to 0); ERASE sets the
 *     1 KiB block at FMA (block-aligned) to 0xFF; FMC2 WRBUF programs the
 *     FWBn words marked in FWBVAL into the 128-byte window at FMA and clears
 *     FWBVAL;
 *   - an operation takes a few polls of its busy bit (WRITE, ERASE, WRBUF)
 *     to finish: its effect appears only then, and touching FMA, FMD, FMC,
 *     FMC2, FWBn or reading the array meanwhile is a protocol violation
 *     (counted; writes ignored, reads see the old contents);
 *   - a program/erase of a protected 2 KiB block (FMPPEn) or outside the
 *     array sets FCRIS.ARIS and changes nothing; every finished operation
 *     sets FCRIS.PRIS; writing 1s to FCMISC clears them.
 * It also counts what the real chip would dislike: words programmed more
 * than once between erases, and cells already at 0 programmed again. */
#ifndef LITEDAV_FLASH_CTRL_MODEL_H
#define LITEDAV_FLASH_CTRL_MODEL_H

#include <stdint.h>

#define FCM_FLASH_BYTES (256u * 1024u)

struct fcm_stats {
    uint32_t word_writes;      /* FMC WRITE operations finished */
    uint32_t buffered_writes;  /* FMC2 WRBUF operations finished */
    uint32_t words_programmed; /* words programmed by either */
    uint32_t erases;
    uint32_t wrong_key;        /* FMC/FMC2 writes without the key (ignored) */
    uint32_t access_errors;    /* operations refused with ARIS */
    uint32_t violations;       /* protocol errors: busy, misaligned, several op bits */
    uint32_t reprogrammed_words; /* a word programmed again since its erase */
    uint32_t repulsed_cells;   /* a 0 bit programmed again */
};

/* Power-on state: array erased (0xFF), registers zero, nothing protected. */
void fcm_reset(void);
/* Make the 2 KiB block containing addr read-only (clears its FMPPEn bit). */
void fcm_protect(uint32_t addr);
const struct fcm_stats *fcm_stats(void);

/* The driver's view: registers by offset from 0x400FD000, array words and bytes. */
uint32_t fcm_reg_read(uint32_t offset);
void fcm_reg_write(uint32_t offset, uint32_t value);
uint32_t fcm_word_read(uint32_t addr);
const uint8_t *fcm_array(void);

#endif
