/*
 * Runs a command under the seccomp rules that Deploy/trustbed.service asks systemd for, so a
 * build can be tried against them without installing the unit (see sandbox_probe.sh):
 *
 *   NoNewPrivileges=yes
 *   SystemCallFilter=<names read from SYSCALL_FILE, one a line>
 *   RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX   (others: EAFNOSUPPORT, as systemd does)
 *   MemoryDenyWriteExecute=yes   (systemd 252's rules: no mmap with PROT_WRITE|PROT_EXEC,
 *                                 no mprotect/pkey_mprotect adding PROT_EXEC, no shmat SHM_EXEC)
 *
 * Any other call outside those rules kills the process with SIGSYS (the kernel logs the system
 * call number), which is stricter than the unit's SystemCallErrorNumber=EPERM: a clean run
 * here means the binary never even tried a refused call.
 *
 *   cc -O2 -o sandbox_probe sandbox_probe.c -lseccomp
 *   ./sandbox_probe SYSCALL_FILE COMMAND [ARG...]
 */
#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <unistd.h>

static void
fail (const char *what, int rc)
{
  fprintf (stderr, "sandbox_probe: %s: %s\n", what, strerror (rc < 0 ? -rc : rc));
  exit (2);
}

int
main (int argc, char **argv)
{
  if (argc < 3)
  {
    fprintf (stderr, "usage: %s SYSCALL_FILE COMMAND [ARG...]\n", argv[0]);
    return 2;
  }
  FILE *list = fopen (argv[1], "r");
  if (NULL == list)
    fail (argv[1], errno);

  scmp_filter_ctx ctx = seccomp_init (SCMP_ACT_KILL_PROCESS);
  if (NULL == ctx)
    fail ("seccomp_init", ENOMEM);

  /* Calls that carry argument rules below must not be allowed unconditionally. */
  static const char *const guarded[] = { "socket", "mmap", "mmap2", "mprotect", "pkey_mprotect", "shmat" };
  char name[128];
  unsigned allowed = 0;
  while (NULL != fgets (name, sizeof name, list))
  {
    name[strcspn (name, " \t\r\n")] = '\0';
    if ('\0' == name[0] || '#' == name[0])
      continue;
    int skip = 0;
    for (size_t i = 0; i < sizeof guarded / sizeof guarded[0]; i++)
      if (0 == strcmp (name, guarded[i]))
        skip = 1;
    int nr = seccomp_syscall_resolve_name (name);
    if (skip || __NR_SCMP_ERROR == nr)
      continue; /* not a call on this architecture (systemd skips those too) */
    int rc = seccomp_rule_add (ctx, SCMP_ACT_ALLOW, nr, 0);
    if (rc < 0)
      fail (name, rc);
    allowed++;
  }
  fclose (list);

  int rc = 0;
  /* RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX: other families fail with
   * EAFNOSUPPORT, as under systemd (glibc's getaddrinfo, for one, copes with a refused
   * AF_NETLINK socket). AF_UNIX < AF_INET < AF_INET6, so the rules partition all values. */
  for (int family = 0; family <= AF_INET6; family++)
    rc |= seccomp_rule_add (ctx,
                            (AF_UNIX == family || AF_INET == family || AF_INET6 == family)
                              ? SCMP_ACT_ALLOW : SCMP_ACT_ERRNO (EAFNOSUPPORT),
                            SCMP_SYS (socket), 1, SCMP_A0 (SCMP_CMP_EQ, (scmp_datum_t) family));
  rc |= seccomp_rule_add (ctx, SCMP_ACT_ERRNO (EAFNOSUPPORT), SCMP_SYS (socket), 1,
                          SCMP_A0 (SCMP_CMP_GT, (scmp_datum_t) AF_INET6));
  /* MemoryDenyWriteExecute=yes */
  rc |= seccomp_rule_add (ctx, SCMP_ACT_ALLOW, SCMP_SYS (mmap), 1,
                          SCMP_A2 (SCMP_CMP_MASKED_EQ, PROT_WRITE | PROT_EXEC, PROT_WRITE));
  rc |= seccomp_rule_add (ctx, SCMP_ACT_ALLOW, SCMP_SYS (mmap), 1,
                          SCMP_A2 (SCMP_CMP_MASKED_EQ, PROT_WRITE | PROT_EXEC, PROT_EXEC));
  rc |= seccomp_rule_add (ctx, SCMP_ACT_ALLOW, SCMP_SYS (mmap), 1,
                          SCMP_A2 (SCMP_CMP_MASKED_EQ, PROT_WRITE | PROT_EXEC, 0));
  rc |= seccomp_rule_add (ctx, SCMP_ACT_ALLOW, SCMP_SYS (mprotect), 1,
                          SCMP_A2 (SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
  rc |= seccomp_rule_add (ctx, SCMP_ACT_ALLOW, SCMP_SYS (pkey_mprotect), 1,
                          SCMP_A2 (SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
  rc |= seccomp_rule_add (ctx, SCMP_ACT_ALLOW, SCMP_SYS (shmat), 1,
                          SCMP_A2 (SCMP_CMP_MASKED_EQ, SHM_EXEC, 0));
  if (rc < 0)
    fail ("argument rules", rc);

  /* NoNewPrivileges=yes (also what lets an unprivileged process load a filter). */
  if (0 != prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
    fail ("PR_SET_NO_NEW_PRIVS", errno);
  rc = seccomp_load (ctx);
  if (rc < 0)
    fail ("seccomp_load", rc);
  seccomp_release (ctx);

  fprintf (stderr, "sandbox_probe: %u system calls allowed, exec %s\n", allowed, argv[2]);
  execv (argv[2], argv + 2);
  fail (argv[2], errno);
  return 2;
}
