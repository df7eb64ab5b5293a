/*
 * A stand-in libdispatch for job_path.c, preloaded after the agent so that
 * the agent's wrappers hand their calls on to it: dispatch_async_f keeps the
 * job for the caller to run, and every queue carries the label Swift's
 * runtime gives its pool queues.
 */
typedef void (*work_fn)(void *);
__thread work_fn job_path_kept_fn __attribute__((tls_model("initial-exec")));
__thread void *job_path_kept_ctx __attribute__((tls_model("initial-exec")));

void dispatch_async_f(void *queue, void *ctx, work_fn fn)
{
    (void)queue;
    job_path_kept_fn = fn;
    job_path_kept_ctx = ctx;
}

void dispatch_queue_set_width(void *queue, long width) { (void)queue; (void)width; }

const char *dispatch_queue_get_label(void *queue)
{
    (void)queue;
    return "Swift global concurrent queue";
}
