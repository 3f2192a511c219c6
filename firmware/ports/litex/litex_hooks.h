/* lwIP hooks of the LiteX port, read by lwIP's sources through
 * LWIP_HOOK_FILENAME (lwipopts.h): the SYN queue (firmware/app/net/syn_queue.h)
 * on every build, and the offload NIC's TCP segmentation offload
 * (offload_tso.h) on SoCs that have that NIC, and RFC 6528 initial sequence
 * numbers (tcp_isn.h). lwIP takes one file and one function per hook, so
 * lwipopts.h chains the two input hooks. */
#ifndef LITEDAV_LITEX_HOOKS_H
#define LITEDAV_LITEX_HOOKS_H

#include <generated/soc.h>

#include "net/syn_queue.h"
#include "net/tcp_isn_lwip.h"
#ifdef LITEDAV_NIC_OFFLOAD
#include "offload_tso.h"
#endif

#endif
