package rebalance.harness;

import com.alibaba.fastjson2.JSON;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The process's NDJSON trace on its standard output, one event a line.
 *
 * <p>Stamps are {@code System.nanoTime()}, which on Linux is CLOCK_MONOTONIC and so comparable
 * across the processes of one host: the orchestrator merges every process's lines by it. Anything
 * else that writes to standard output (RocketMQ prints a few lines) is sent to standard error
 * instead, so that the trace stays one JSON object a line.
 */
final class Trace {
    /** The trace schema's version; the orchestrator refuses a trace of another. */
    static final int SCHEMA = 3;

    /** Guards {@link #seq}: a stamp and its number are taken together. */
    private static final Object STAMP = new Object();

    private static long seq;
    private static final PrintStream OUT =
            new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
    private static volatile String process = "?";

    private Trace() {}

    static void init(String name) {
        process = name;
        System.setOut(System.err);
    }

    /** Emits one event: its kind, then field names and values in pairs. */
    static void emit(String ev, Object... fields) {
        // Stamped and numbered at once, so that a process's numbers order its stamps: the
        // validator refuses a trace whose later number has the earlier stamp, which two threads
        // taking them apart produced under load.
        long t;
        long n;
        synchronized (STAMP) {
            t = System.nanoTime();
            n = ++seq;
        }
        Map<String, Object> line = new LinkedHashMap<>();
        line.put("t", t);
        line.put("p", process);
        line.put("seq", n);
        line.put("thr", Thread.currentThread().getName());
        line.put("ev", ev);
        for (int i = 0; i + 1 < fields.length; i += 2) {
            line.put((String) fields[i], fields[i + 1]);
        }
        String text = JSON.toJSONString(line);
        synchronized (OUT) {
            OUT.println(text);
            OUT.flush();
        }
    }
}
