// Stand-in for absl/log/log.h: LOG(severity) and LOG_IF(severity, condition).
#ifndef SEED_DMLAB_ABSL_LOG_LOG_H_
#define SEED_DMLAB_ABSL_LOG_LOG_H_

#include "absl/log/internal_message.h"

#define LOG(severity) ABSL_STANDIN_LOG(severity)
#define LOG_IF(severity, condition) ABSL_STANDIN_LOG_IF(severity, condition)

#endif  // SEED_DMLAB_ABSL_LOG_LOG_H_
