/* huge.h — huge-page coverage: the share of the process's resident memory on transparent huge
 * pages, AnonHugePages over Rss of /proc/self/smaps_rollup, read the same way under every
 * allocator (issue 50). */
#ifndef HB_HUGE_H
#define HB_HUGE_H

/* From smaps_rollup's text: *huge_kb (AnonHugePages) and *rss_kb (Rss), -1 when missing; the
 * coverage huge / rss in [0, 1], or -1 when either is missing or Rss is 0. */
double hb_huge_parse(const char *text, long *huge_kb, long *rss_kb);
/* The same from /proc/self/smaps_rollup now (-1 and both -1 if unreadable). */
double hb_huge_coverage(long *huge_kb, long *rss_kb);

#endif
