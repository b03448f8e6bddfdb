/*
 * libagenttools — umbrella header: includes every public header.
 */
#ifndef AGENTTOOLS_H
#define AGENTTOOLS_H

#include "common.h"
#include "schema.h"
#include "registry.h"
#include "dispatch.h"
#include "session.h"
#include "sandbox.h"
#include "cron.h"
#include "diff.h"
#include "git.h"
#include "model.h"
#include "agent.h"

#endif /* AGENTTOOLS_H */
