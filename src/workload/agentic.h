/* agentic.h — agent sessions as a workload: each session is a run of turns;
 * a turn resends the whole history (the system prompt, every earlier user
 * message, assistant reply with its tool calls, and tool result) plus what
 * is new, and waits for the turn before it (workload_follows). Sessions come
 * from a JSON file (`--agentic FILE`) or a seeded generator. They become a
 * multi-turn dataset: one entry per turn, the session its conversation.
 *
 * A turn may wait a think time after the reply before it, and may spawn
 * sub-agents: K requests sent in parallel after the turn's reply, each the
 * session's history so far plus a task of its own (a branch: the history is
 * their shared prefix); the session's next turn waits for all of them and
 * carries the turn's K "task" tool calls answered by their results. */
#ifndef ANVIL_WORKLOAD_AGENTIC_H
#define ANVIL_WORKLOAD_AGENTIC_H

#include <stddef.h>
#include <stdint.h>

#include "workload/dataset.h"

/* One turn: lengths in filler words (about one token each; the run reports
 * the server's counts). */
struct agentic_turn {
    long user_len;          /* a user message sent this turn; 0 = none (the turn answers tool calls) */
    long tool_calls;        /* calls the reply to this turn is expected to make: the next turn
                               carries the assistant message with them and one tool result each */
    long tool_result_len;   /* words of each tool result answering this turn's calls */
    long output_len;        /* max_tokens of the turn; -1 = --output-len */
    double think_s;         /* seconds between the end of what it waits for (the turn before it and
                               that turn's sub-agents) and its send; unused on a first turn */
    long sub_agents;        /* sub-agents its reply spawns (0..64) */
    long sub_agent_len;     /* words of each sub-agent's task message */
    long sub_agent_output_len;  /* max_tokens of each sub-agent request; -1 = --output-len */
    long sub_agent_result_len;  /* words of each sub-agent's result the next turn carries */
};

struct agentic_session {
    long system_len;        /* words of the system prompt; 0 = none */
    struct agentic_turn *turns;     /* owned */
    size_t n_turns;
};

struct agentic {
    struct agentic_session *sessions;   /* owned */
    size_t n;
    char source[600];       /* "file:PATH" or the generator's settings, for the artifact */
};

/* The generator: n sessions of turns drawn uniformly from [turns_min,
 * turns_max], each turn but the last expecting one tool call whose result
 * has tool_result_len words, the first turn a user message of user_len
 * words after a system prompt of system_len; every turn after the first a
 * think time uniform in [think_min_s, think_max_s]; each turn but the last
 * spawning sub_agents sub-agents (task of user_len words, result of
 * tool_result_len words); seeded. */
struct agentic_gen {
    long sessions, turns_min, turns_max;
    long user_len, tool_result_len, system_len;
    double think_min_s, think_max_s;
    long sub_agents;
    uint64_t seed;
};

/* Reads path: {"sessions": [{"system_len": N, "turns": [{"user_len": N,
 * "tool_calls": N, "tool_result_len": N, "output_len": N, "think_time_s":
 * S, "sub_agents": K, "sub_agent_len": N, "sub_agent_output_len": N,
 * "sub_agent_result_len": N}, ...]}, ...]} (every key of a turn optional:
 * 0, 0, 0, --output-len, 0, 0, 100, --output-len, 100; a session needs one
 * turn at least, the first with a user message or a system prompt; no
 * think time above 86400 s, no more than 64 sub-agents).
 * Returns 0, or -1 with a message naming the file and the session/turn. */
int agentic_load(const char *path, struct agentic *out, char *err, size_t errlen);

/* Fills out from g. Returns 0, or -1 with a message (bad ranges, memory). */
int agentic_generate(const struct agentic_gen *g, struct agentic *out, char *err, size_t errlen);

/* Parses "A..B" (or "A") turn counts, whole numbers 1 <= A <= B <= 10000
 * (--turns). Returns 0 or -1. */
int agentic_parse_range(const char *s, long *lo, long *hi);

/* Parses "A..B" (or "A") seconds of think time, 0 <= A <= B <= 86400
 * (--think-time; "1..5" and "0.5..1" alike). Returns 0 or -1. */
int agentic_parse_think(const char *s, double *lo, double *hi);

/* The sessions as a multi-turn dataset (*out empty before): entry per turn,
 * in session order, each turn's sub-agents right after it (agent 1..K);
 * conversation = session index; entries' turn, agent and think_s set. Text
 * is seeded filler (prompt.h) by seed, session and turn; tool call ids and
 * arguments are made up alike. Returns 0, or -1 (memory). */
int agentic_to_dataset(const struct agentic *a, uint64_t seed, struct dataset *out);

/* Frees what a owns. */
void agentic_free(struct agentic *a);

#endif
