/* lwIP hooks of the LM3S9B95 port, read by lwIP's sources through
 * LWIP_HOOK_FILENAME (lwipopts.h): the SYN queue (firmware/app/net/syn_queue.h)
 * and RFC 6528 initial sequence numbers (firmware/app/net/tcp_isn.h). */
#ifndef LITEDAV_LM3S_HOOKS_H
#define LITEDAV_LM3S_HOOKS_H

#include "net/syn_queue.h"
#include "net/tcp_isn_lwip.h"

#endif
