/* The corpus's control: no misuse. Run under each row first, so a row whose library did not
 * load (ld.so ignores an LD_PRELOAD it cannot load) is never mistaken for one that noticed
 * nothing. It prints the file of the malloc that runs (dlsym, dladdr) and exits 0. */
#include <dlfcn.h>
#include <stdio.h>

#include "misuse.h"

int main(void) {
    char *a = malloc(BLOCK);
    memset(a, 1, BLOCK);
    free(a);
    Dl_info info;
    void *m = dlsym(RTLD_DEFAULT, "malloc");
    if (!m || !dladdr(m, &info) || !info.dli_fname) return 2;
    printf("%s\n", info.dli_fname);
    return 0;
}
