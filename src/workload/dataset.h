/* dataset.h — prompts from files: JSON Lines (`jsonl:FILE`, one prompt or
 * chat message list per line, optional max_tokens) and the ShareGPT format
 * (`sharegpt:FILE`). With multi-turn, each conversation becomes one entry
 * per user turn, carrying the history before it. A line (or conversation)
 * may name image files ("images": [PATH...], or "image": PATH; relative to
 * the dataset file's folder): PNG or JPEG, sent base64 in image_url parts
 * after the text of its first user message. */
#ifndef ANVIL_WORKLOAD_DATASET_H
#define ANVIL_WORKLOAD_DATASET_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

struct dataset_entry {
    cJSON *messages;    /* owned: [{"role", "content"}...], the last one a user turn */
    long max_tokens;    /* tokens; -1 = not given (use --output-len) */
    long conversation;  /* index of the conversation it came from (prefix-cache salt) */
    long turn;          /* its turn in the conversation, from 0 */
    char *reply;        /* owned: the recorded assistant reply that followed, or NULL */
    long agent;         /* agentic: 0 = the session's agent; k >= 1 = the k-th sub-agent its
                           turn `turn` spawned (sent after that turn, before the next) */
    double think_s;     /* agentic: held this long after what it waits for ended, s (0 = none) */
};

struct dataset {
    struct dataset_entry *entries;  /* owned */
    size_t n;
    long images;                    /* image parts over every entry's messages */
    char spec[512];                 /* "jsonl:FILE" or "sharegpt:FILE", for the artifact */
};

/* Loads spec ("jsonl:PATH" or "sharegpt:PATH"). multi_turn expands every
 * user turn of a conversation into its own entry (with the recorded history);
 * otherwise each line / conversation gives its first user turn. Every image
 * is read now, before anything is sent. Returns 0, or -1 with a message
 * naming the file, line or entry (and the image) in err. */
int dataset_load(const char *spec, bool multi_turn, struct dataset *out, char *err, size_t errlen);

/* Frees every entry. */
void dataset_free(struct dataset *d);

#endif
