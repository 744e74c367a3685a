/*
 * The interposer: a library installed as lib/ksym-bcc/libbcc.so.0, for
 * programs that load bcc's library by its soname and look its functions up
 * in that handle (bcc's Python module: ctypes.CDLL("libbcc.so.0")), which a
 * preloaded library cannot reach. With that directory in LD_LIBRARY_PATH,
 * the program loads this one instead. It has no code of its own: its
 * dependencies, in this order, are libksym-bcc.so.0 (RUNPATH $ORIGIN/..)
 * and bcc's real library by its absolute path (BCC_REAL_LIB at build time,
 * the soname's symlink, so any bcc version installed there serves). A
 * lookup through the handle searches the library and then its dependencies
 * in that order: bcc_symcache_* come from libksym-bcc, every other bcc
 * function from bcc. Nothing is installed over the system's libbcc.
 */
const char ksym_bcc_interposer[] __attribute__((visibility("hidden"))) = "libksym-bcc's interposer for libbcc.so.0";
