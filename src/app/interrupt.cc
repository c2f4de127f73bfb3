#include "app/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>

#include "core/subprocess.h"

namespace kforge {
namespace {

CancellationToken* g_token = nullptr;
std::atomic<int> g_interrupts{0};

void OnInterrupt(int sig) {
  if (g_interrupts.fetch_add(1) == 0) {
    if (g_token != nullptr) g_token->CancelFromSignal(sig);
    static const char kFirst[] = "\nkforge: stopping at the next safe point (press Ctrl-C again to stop now)\n";
    (void)!::write(STDERR_FILENO, kFirst, sizeof kFirst - 1);
    return;
  }
  KillAllChildren();
  static const char kSecond[] = "\nkforge: stopped now; the children were killed\n";
  (void)!::write(STDERR_FILENO, kSecond, sizeof kSecond - 1);
  ::_exit(kExitInterrupted);
}

}  // namespace

void InstallInterruptHandlers(CancellationToken& token) {
  g_token = &token;
  struct sigaction sa {};
  sa.sa_handler = OnInterrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

}  // namespace kforge
