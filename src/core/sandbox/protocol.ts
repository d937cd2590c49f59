/**
 * The one protocol between a {@link SandboxPool} (in the API or worker process) and its children
 * (python-child.mts, compile-child.mts), which run inside bubblewrap. The child's side is
 * child-channel.mts; what a job and an answer hold is each kind's own business.
 *
 * {@link RESULT_FD} (child to parent), one JSON document per line:
 *   `{"type":"ready"}` once the child has loaded what it needs, before it reads any job;
 *   `{"type":"result","nonce":"<the job's nonce>","payload":<the kind's answer>}` once the job ran.
 * Standard input (parent to child), written once, after the child said it is ready:
 *   line 1: the job's nonce (random hex, new for every job), then `\n`;
 *   the rest: the job, as the kind defines it.
 *
 * The child reads the nonce into a closure before any job code runs, and writes the result with
 * references it took at start-up. Code the job runs (a report, a model) shares the child's realm,
 * so it can write on RESULT_FD, exit with any code, be killed or run out of memory: none of that
 * carries the nonce, and none of it is taken for an answer. The child's standard output is
 * discarded; its standard error is kept (a tail) for the log.
 */

/** A pipe of its own for the messages: nothing the job prints can be taken for one. */
export const RESULT_FD = 3;

/** The pipe on which bubblewrap reads the seccomp filter (`--seccomp 4`). */
export const SECCOMP_FD = 4;

/** Bytes of randomness in a job's nonce (sent as hex). */
export const NONCE_BYTES = 16;
