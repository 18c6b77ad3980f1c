package rebalance.harness;

import com.alibaba.fastjson2.JSON;
import com.alibaba.fastjson2.JSONObject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What the consumer agents share, the remoting client's ({@link ConsumerAgent}) and the gRPC
 * client's ({@link GrpcConsumerAgent}): their life as a process (a consumer file in, {@code ready}
 * with the client id, then the orchestrator's commands) and the application's work on a
 * delivery.
 */
final class Agents {
    /** A consumer agent, once made from its consumer file. */
    interface Agent {
        /** The client id its brokers or its proxy know it by. */
        String clientId();

        /** One of the orchestrator's commands. */
        void handle(String cmd, JSONObject args) throws Exception;
    }

    /** Makes an agent from its consumer file; bad input is an {@link IllegalArgumentException}. */
    interface Factory {
        Agent make(JSONObject spec) throws Exception;
    }

    private Agents() {}

    /**
     * Runs an agent: reads its consumer file ({@code args[0]}), makes it (exit 2 on bad input, 3
     * on any other failure, each traced as {@code failed}), traces it {@code ready}, serves the
     * orchestrator's commands until they end, then exits.
     */
    static void run(String[] args, Factory factory) throws Exception {
        JSONObject spec =
                JSON.parseObject(Files.readString(Path.of(args[0]), StandardCharsets.UTF_8));
        Trace.init(spec.getString("name"));
        Agent agent;
        try {
            agent = factory.make(spec);
        } catch (Exception e) {
            Trace.emit("failed", "reason", String.valueOf(e));
            e.printStackTrace();
            System.exit(e instanceof IllegalArgumentException ? 2 : 3);
            return;
        }
        Trace.emit("c.life", "state", "ready", "client", agent.clientId(),
                "pid", ProcessHandle.current().pid());
        Commands.serve(agent::handle);
        System.exit(0);
    }

    /**
     * Whether the consumer file's {@code listener} stops a batch when its thread is interrupted
     * ({@code stops}) or works on to its end ({@code ignores}).
     */
    static boolean stopsOnInterrupt(JSONObject spec) {
        String listener = spec.getString("listener");
        if (!List.of("ignores", "stops").contains(listener)) {
            throw new IllegalArgumentException("listener " + listener + " is not ignores or stops");
        }
        return listener.equals("stops");
    }

    /**
     * The application's work on a delivery: {@code millis}, to the end unless it stops on an
     * interrupt. An interrupt it met stays set on the thread, for the listener to see.
     */
    static void work(long millis, boolean stopsOnInterrupt) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        boolean interrupted = false;
        for (long left = millis; left > 0;
                left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())) {
            try {
                Thread.sleep(left);
            } catch (InterruptedException e) {
                interrupted = true;
                if (stopsOnInterrupt) {
                    break;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
