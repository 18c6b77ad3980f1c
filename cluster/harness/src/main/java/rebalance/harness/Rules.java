package rebalance.harness;

import com.alibaba.fastjson2.JSONObject;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The faults and gates a script installs at a hook point: the model's environment faults (a
 * request failed or dropped) and the gates that drive a race (a thread held until the script
 * releases it). A rule matches on the hook point, and optionally the request code, the client,
 * the broker and the queue; it applies to its next {@code count} matches (all when absent).
 */
final class Rules {
    /** What a matched rule does. */
    enum Action {
        /** Let it through (no rule matched, or the rule has run out). */
        PASS,
        /** Fail the request: the caller sees an error. */
        FAIL,
        /** Drop it silently (a oneway request, an incoming notification). */
        DROP
    }

    private static final class Rule {
        final String id;
        final String at;
        final Integer code;
        final String client;
        final String broker;
        final String queue;
        final String action;
        int remaining;
        final CountDownLatch released = new CountDownLatch(1);

        Rule(JSONObject spec) {
            id = spec.getString("id");
            at = spec.getString("at");
            code = spec.getInteger("code");
            client = spec.getString("client");
            broker = spec.getString("broker");
            queue = spec.getString("queue");
            action = spec.getString("action");
            remaining = spec.containsKey("count") ? spec.getIntValue("count") : -1;
            if (id == null || at == null || action == null) {
                throw new IllegalArgumentException("a rule needs id, at and action: " + spec);
            }
            if (!List.of("fail", "drop", "hold").contains(action)) {
                throw new IllegalArgumentException("unknown rule action " + action);
            }
        }

        boolean matches(String at, int code, String client, String broker, String queue) {
            return this.at.equals(at)
                    && (this.code == null || this.code == code)
                    && (this.client == null || this.client.equals(client))
                    && (this.broker == null || this.broker.equals(broker))
                    && (this.queue == null || this.queue.equals(queue));
        }
    }

    private static final List<Rule> RULES = new CopyOnWriteArrayList<>();

    private Rules() {}

    static void install(JSONObject spec) {
        RULES.add(new Rule(spec));
    }

    static void release(String id) {
        boolean found = false;
        for (Rule r : RULES) {
            if (r.id.equals(id)) {
                RULES.remove(r);
                r.released.countDown();
                found = true;
            }
        }
        if (!found) {
            throw new IllegalArgumentException("no rule " + id);
        }
    }

    /**
     * Consults the rules at a hook point: blocks while a matching gate is held (tracing
     * {@code gate.held} and {@code gate.passed}), and returns what a matching fault does.
     */
    static Action at(String at, int code, String client, String broker, String queue) {
        return at(at, code, client, broker, queue, false);
    }

    /**
     * {@link #at(String, int, String, String, String)}, a gate that ignores its thread's
     * interrupt when {@code ignoreInterrupts} (it stands for work that does not look at it).
     */
    static Action at(String at, int code, String client, String broker, String queue,
            boolean ignoreInterrupts) {
        for (Rule r : RULES) {
            if (!r.matches(at, code, client, broker, queue)) {
                continue;
            }
            synchronized (r) {
                if (r.remaining == 0) {
                    continue;
                }
                if (r.remaining > 0) {
                    r.remaining--;
                }
            }
            Trace.emit("rule", "id", r.id, "at", at, "code", code, "client", client,
                    "broker", broker, "queue", queue, "action", r.action);
            if (r.action.equals("hold")) {
                awaitRelease(r, ignoreInterrupts);
                Trace.emit("gate.passed", "id", r.id, "at", at, "queue", queue);
                return Action.PASS;
            }
            return r.action.equals("fail") ? Action.FAIL : Action.DROP;
        }
        return Action.PASS;
    }

    /**
     * Waits for the rule's release. An interrupt ends the wait, unless {@code ignoreInterrupts}:
     * then it is kept for the thread to see once the wait is over.
     */
    private static void awaitRelease(Rule r, boolean ignoreInterrupts) {
        // A forgotten release must not hang the run: the orchestrator's deadline ends it.
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
        boolean interrupted = false;
        while (true) {
            try {
                r.released.await(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
                break;
            } catch (InterruptedException e) {
                interrupted = true;
                if (!ignoreInterrupts) {
                    break;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
