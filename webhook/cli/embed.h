/*
 * webhook/cli/embed.h — a file of the repository in the binary, as it is:
 * the assembler copies its bytes (.incbin, at build time, from the
 * repository's root where make runs) into section `section`, aligned to
 * `align` bytes; sym is its first byte, sym_end one past its last (a NUL
 * follows). builtin_crds.c (the CRDs) and dev_state.c (serve --dev's
 * examples) use it; the Makefile rebuilds each when one of its files changes.
 */
#ifndef TW_CLI_EMBED_H
#define TW_CLI_EMBED_H

#define TW_EMBED_FILE(section, align, sym, file)                               \
	__asm__(".section " section ",\"a\"\n"                                 \
		".balign " #align "\n"                                         \
		".globl " #sym "\n.hidden " #sym "\n" #sym ":\n"               \
		".incbin \"" file "\"\n"                                       \
		".globl " #sym "_end\n.hidden " #sym "_end\n" #sym "_end:\n"   \
		".byte 0\n"                                                    \
		".previous\n");                                                \
	extern const char sym[], sym##_end[]

#endif /* TW_CLI_EMBED_H */
