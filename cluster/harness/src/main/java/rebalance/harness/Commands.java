package rebalance.harness;

import com.alibaba.fastjson2.JSON;
import com.alibaba.fastjson2.JSONObject;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

/**
 * The orchestrator's commands on standard input, one JSON object a line with a {@code cmd} and
 * an {@code id}. Each is answered by an {@code ack} (done) or a {@code nack} (refused, with the
 * reason) carrying its id, so that the orchestrator knows when a step has taken effect. The end
 * of standard input (the orchestrator gone) ends the process.
 */
final class Commands {
    interface Handler {
        void handle(String cmd, JSONObject args) throws Exception;
    }

    private Commands() {}

    static void serve(Handler handler) throws Exception {
        BufferedReader in =
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            JSONObject command;
            try {
                command = JSON.parseObject(line);
            } catch (RuntimeException e) {
                Trace.emit("nack", "id", null, "reason", "not a JSON object: " + line);
                continue;
            }
            String id = command.getString("id");
            String cmd = command.getString("cmd");
            try {
                if ("exit".equals(cmd)) {
                    Trace.emit("ack", "id", id, "cmd", cmd);
                    return;
                }
                handler.handle(cmd, command);
                Trace.emit("ack", "id", id, "cmd", cmd);
            } catch (Exception e) {
                Trace.emit("nack", "id", id, "cmd", cmd, "reason", String.valueOf(e));
            }
        }
    }
}
