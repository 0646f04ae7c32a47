/* The pod sandbox's process for the test node's pause image: sleeps in
 * pause() until SIGINT/SIGTERM and reaps any child reparented to it (it is
 * PID 1 of the pod's namespaces). Built with `gcc -static` by images.ts. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void quit(int sig) { (void)sig; _exit(0); }
static void reap(int sig) { (void)sig; while (waitpid(-1, NULL, WNOHANG) > 0) {} }

int main(void) {
  struct sigaction q = {.sa_handler = quit}, r = {.sa_handler = reap, .sa_flags = SA_NOCLDSTOP};
  if (getpid() != 1) { static const char m[] = "pause: warning: not PID 1\n"; write(2, m, sizeof m - 1); }
  sigaction(SIGINT, &q, NULL);
  sigaction(SIGTERM, &q, NULL);
  sigaction(SIGCHLD, &r, NULL);
  for (;;) pause();
}
