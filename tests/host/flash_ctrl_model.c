#include "flash_ctrl_model.h"

#include <string.h>

/* Register offsets and bits, from the LM3S9B95 data sheet (kept apart from
 * the driver's own definitions on purpose). */
enum {
    R_FMA = 0x000, R_FMD = 0x004, R_FMC = 0x008, R_FCRIS = 0x00C, R_FCIM = 0x010,
    R_FCMISC = 0x014, R_FMC2 = 0x020, R_FWBVAL = 0x030, R_FWB0 = 0x100, R_FWB31 = 0x17C,
};
#define KEY        0xA442u
#define FMC_WRITE  0x1u
#define FMC_ERASE  0x2u
#define FMC_MERASE 0x4u
#define FMC_COMT   0x8u
#define FMC2_WRBUF 0x1u
#define ARIS       0x1u
#define PRIS       0x2u
#define ERASE_BLOCK 1024u
#define PROTECT_BLOCK 2048u
#define WINDOW     128u

/* polls of the busy bit before an operation finishes */
#define POLLS_WRITE 3
#define POLLS_WRBUF 5
#define POLLS_ERASE 9

static uint8_t array[FCM_FLASH_BYTES];
static uint8_t programmed[FCM_FLASH_BYTES / 4];  /* programs per word since its erase */
static uint8_t protect[FCM_FLASH_BYTES / PROTECT_BLOCK];
static struct {
    uint32_t fma, fmd, fcris, fcim, fwbval, fwb[32];
    uint32_t busy_reg, busy_bit;   /* the operation in progress, if busy_polls */
    int busy_polls;
} r;
static struct fcm_stats st;

void fcm_reset(void)
{
    memset(array, 0xFF, sizeof(array));
    memset(programmed, 0, sizeof(programmed));
    memset(protect, 0, sizeof(protect));
    memset(&r, 0, sizeof(r));
    memset(&st, 0, sizeof(st));
}

void fcm_protect(uint32_t addr) { protect[(addr % FCM_FLASH_BYTES) / PROTECT_BLOCK] = 1; }

const struct fcm_stats *fcm_stats(void) { return &st; }

const uint8_t *fcm_array(void) { return array; }

static int writable(uint32_t addr)
{
    return addr < FCM_FLASH_BYTES && !protect[addr / PROTECT_BLOCK];
}

static uint32_t get_word(uint32_t addr)
{
    return (uint32_t)array[addr] | (uint32_t)array[addr + 1] << 8 |
           (uint32_t)array[addr + 2] << 16 | (uint32_t)array[addr + 3] << 24;
}

static void program_word(uint32_t addr, uint32_t data)
{
    uint32_t old = get_word(addr), now = old & data, i;
    if (programmed[addr / 4]++)
        st.reprogrammed_words++;
    st.repulsed_cells += (uint32_t)__builtin_popcount(~old & ~data);
    st.words_programmed++;
    for (i = 0; i < 4; i++)
        array[addr + i] = (uint8_t)(now >> (8 * i));
}

/* The operation's effect, once its busy time is over. */
static void finish(void)
{
    uint32_t i;
    if (r.busy_reg == R_FMC && r.busy_bit == FMC_WRITE) {
        program_word(r.fma, r.fmd);
        st.word_writes++;
    } else if (r.busy_reg == R_FMC) {
        memset(array + r.fma, 0xFF, ERASE_BLOCK);
        memset(programmed + r.fma / 4, 0, ERASE_BLOCK / 4);
        st.erases++;
    } else {
        for (i = 0; i < 32; i++)
            if (r.fwbval & (1u << i))
                program_word(r.fma + 4 * i, r.fwb[i]);
        r.fwbval = 0;
        st.buffered_writes++;
    }
    r.fcris |= PRIS;
}

static void start(uint32_t reg, uint32_t bit, int polls)
{
    r.busy_reg = reg;
    r.busy_bit = bit;
    r.busy_polls = polls;
}

static void refuse(void)
{
    r.fcris |= ARIS;
    st.access_errors++;
}

static void fmc_command(uint32_t value)
{
    uint32_t op = value & 0xFu;
    if (value >> 16 != KEY) {
        st.wrong_key++;
        return;
    }
    if (op == FMC_WRITE) {
        if (r.fma % 4) {
            st.violations++;
        } else if (!writable(r.fma)) {
            refuse();
        } else {
            start(R_FMC, FMC_WRITE, POLLS_WRITE);
        }
    } else if (op == FMC_ERASE) {
        if (r.fma % ERASE_BLOCK) {
            st.violations++;
        } else if (!writable(r.fma)) {
            refuse();
        } else {
            start(R_FMC, FMC_ERASE, POLLS_ERASE);
        }
    } else {
        /* MERASE or COMT (never wanted by the store driver) or a bit mix */
        (void)FMC_MERASE;
        (void)FMC_COMT;
        st.violations++;
    }
}

static void fmc2_command(uint32_t value)
{
    uint32_t i;
    if (value >> 16 != KEY) {
        st.wrong_key++;
        return;
    }
    if ((value & 0xFFFFu) != FMC2_WRBUF || r.fma % WINDOW) {
        st.violations++;
        return;
    }
    for (i = 0; i < 32; i++)
        if ((r.fwbval & (1u << i)) && !writable(r.fma + 4 * i)) {
            refuse();
            return;
        }
    start(R_FMC2, FMC2_WRBUF, POLLS_WRBUF);
}

uint32_t fcm_reg_read(uint32_t offset)
{
    switch (offset) {
    case R_FMA: return r.fma;
    case R_FMD: return r.fmd;
    case R_FMC:
    case R_FMC2:
        if (r.busy_polls && r.busy_reg == offset) {
            if (--r.busy_polls == 0) {
                finish();
                return 0;
            }
            return r.busy_bit;
        }
        return 0;
    case R_FCRIS: return r.fcris;
    case R_FCIM: return r.fcim;
    case R_FCMISC: return r.fcris & r.fcim;
    case R_FWBVAL: return r.fwbval;
    default:
        if (offset >= R_FWB0 && offset <= R_FWB31 && offset % 4 == 0)
            return r.fwb[(offset - R_FWB0) / 4];
        st.violations++;
        return 0;
    }
}

void fcm_reg_write(uint32_t offset, uint32_t value)
{
    if (r.busy_polls && offset != R_FCMISC && offset != R_FCIM) {
        st.violations++;   /* the controller is busy: the write is lost */
        return;
    }
    switch (offset) {
    case R_FMA: r.fma = value; break;   /* out of the array: refused with ARIS */
    case R_FMD: r.fmd = value; break;
    case R_FMC: fmc_command(value); break;
    case R_FMC2: fmc2_command(value); break;
    case R_FCIM: r.fcim = value & (ARIS | PRIS); break;
    case R_FCMISC: r.fcris &= ~(value & (ARIS | PRIS)); break;
    case R_FWBVAL: r.fwbval = value; break;
    default:
        if (offset >= R_FWB0 && offset <= R_FWB31 && offset % 4 == 0) {
            r.fwb[(offset - R_FWB0) / 4] = value;
            r.fwbval |= 1u << ((offset - R_FWB0) / 4);
        } else {
            st.violations++;
        }
    }
}

uint32_t fcm_word_read(uint32_t addr)
{
    if (addr % 4 || addr >= FCM_FLASH_BYTES) {
        st.violations++;
        return 0;
    }
    if (r.busy_polls)
        st.violations++;   /* the old contents: the operation has not finished */
    return get_word(addr);
}
