// Stand-in for absl/log/check.h: CHECK and QCHECK (exit 1 instead of abort), with the
// comparison forms DeepMind Lab uses. A failed check names the condition as written.
#ifndef SEED_DMLAB_ABSL_LOG_CHECK_H_
#define SEED_DMLAB_ABSL_LOG_CHECK_H_

#include "absl/log/internal_message.h"

#define CHECK(condition) \
  ABSL_STANDIN_LOG_IF(FATAL, !(condition)) << "Check failed: " #condition " "
#define QCHECK(condition) \
  ABSL_STANDIN_LOG_IF(QFATAL, !(condition)) << "Check failed: " #condition " "

#define CHECK_EQ(a, b) CHECK((a) == (b))
#define CHECK_NE(a, b) CHECK((a) != (b))
#define CHECK_LT(a, b) CHECK((a) < (b))
#define CHECK_LE(a, b) CHECK((a) <= (b))
#define CHECK_GT(a, b) CHECK((a) > (b))
#define CHECK_GE(a, b) CHECK((a) >= (b))
#define QCHECK_EQ(a, b) QCHECK((a) == (b))

#endif  // SEED_DMLAB_ABSL_LOG_CHECK_H_
