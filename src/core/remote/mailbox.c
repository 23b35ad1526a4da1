/* mailbox.c — the mailbox between remote frees' two sides (remote.h, which has its inline
 * operations): a heap's inbox, a lock-free stack (lfstack.h) onto which senders push
 * announced superblocks (list), posts (queue) or messages (batch) and from which the owner
 * takes everything at once by exchange (inbox.c), and the limits it counts against. It
 * knows neither side: what it carries are chains of blocks, or superblocks, in remote.h's
 * formats. */
#include "remote.h"

int hl_remote_mode;                      /* HL_REMOTE_* (config.h) */
size_t hl_mailbox_help_bytes;
uint32_t hl_mailbox_queue_cap;

void hl_mailbox_init(void)
{
    hl_remote_mode = hl_cfg.remote_free;
    /* (hoard202607's own defaults set it: it must not bound batch) */
    hl_mailbox_queue_cap = hl_remote_mode == HL_REMOTE_QUEUE ? (uint32_t)hl_cfg.remote_queue_cap
                                                             : 0;
    hl_mailbox_help_bytes = (hl_cfg.release_threshold ? (size_t)hl_cfg.release_threshold : 1)
                            * hl_sb_size;
}
