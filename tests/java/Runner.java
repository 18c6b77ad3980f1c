import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import org.apache.rocketmq.client.consumer.AllocateMessageQueueStrategy;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMachineRoomNearby;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragelyByCircle;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueByMachineRoom;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueConsistentHash;
import org.apache.rocketmq.common.message.MessageQueue;

/**
 * Runs the upstream strategies on cases read from stdin, one line each, written by fresh_cases.py.
 *
 * <p>A line is space-separated; every string is the hex of its UTF-8 bytes, or "-" when empty:
 * {@code STRATEGY SORT(0|1) VIRTUAL_NODES N_IDC idc... N_QUEUES (topic broker queueId)... N_IDS
 * id... N_CALLS current...}. The answer line has one entry per call, tab-separated: {@code Q i,j,k}
 * (indices into the case's queue list, in the order returned) or {@code E hex(message)}.
 */
public class Runner {
    static String decode(String hex) {
        if (hex.equals("-")) {
            return "";
        }
        byte[] bytes = new byte[hex.length() / 2];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
        return new String(bytes, StandardCharsets.UTF_8);
    }

    static String encode(String s) {
        if (s.isEmpty()) {
            return "-";
        }
        StringBuilder hex = new StringBuilder();
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            hex.append(String.format("%02x", b & 0xff));
        }
        return hex.toString();
    }

    /** The strategy of a case; MACHINE_ROOM_NEARBY uses the conformance README's resolver. */
    static AllocateMessageQueueStrategy strategy(String name, int virtualNodes, Set<String> idcs) {
        switch (name) {
            case "AVG":
                return new AllocateMessageQueueAveragely();
            case "AVG_BY_CIRCLE":
                return new AllocateMessageQueueAveragelyByCircle();
            case "CONSISTENT_HASH":
                return new AllocateMessageQueueConsistentHash(virtualNodes);
            case "MACHINE_ROOM": {
                AllocateMessageQueueByMachineRoom s = new AllocateMessageQueueByMachineRoom();
                s.setConsumeridcs(idcs);
                return s;
            }
            case "MACHINE_ROOM_NEARBY":
                return new AllocateMachineRoomNearby(new AllocateMessageQueueAveragely(),
                    new AllocateMachineRoomNearby.MachineRoomResolver() {
                        public String brokerDeployIn(MessageQueue mq) {
                            return mq.getBrokerName().split("-")[0];
                        }

                        public String consumerDeployIn(String clientId) {
                            return clientId.split("-")[0];
                        }
                    });
            default:
                throw new IllegalArgumentException("unknown strategy " + name);
        }
    }

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8)));
        for (String line; (line = in.readLine()) != null; ) {
            String[] t = line.split(" ");
            int p = 0;
            String name = t[p++];
            boolean sort = t[p++].equals("1");
            int virtualNodes = Integer.parseInt(t[p++]);
            Set<String> idcs = new HashSet<>();
            for (int n = Integer.parseInt(t[p++]); n > 0; n--) {
                idcs.add(decode(t[p++]));
            }
            List<MessageQueue> queues = new ArrayList<>();
            for (int n = Integer.parseInt(t[p++]); n > 0; n--) {
                String topic = decode(t[p++]);
                String broker = decode(t[p++]);
                queues.add(new MessageQueue(topic, broker, Integer.parseInt(t[p++])));
            }
            List<String> ids = new ArrayList<>();
            for (int n = Integer.parseInt(t[p++]); n > 0; n--) {
                ids.add(decode(t[p++]));
            }
            // Results name queues by their position in the case, whatever the strategy's order.
            IdentityHashMap<MessageQueue, Integer> position = new IdentityHashMap<>();
            for (int i = 0; i < queues.size(); i++) {
                position.put(queues.get(i), i);
            }
            StringBuilder answer = new StringBuilder();
            for (int n = Integer.parseInt(t[p++]), call = 0; call < n; call++) {
                String current = decode(t[p++]);
                if (call > 0) {
                    answer.append('\t');
                }
                try {
                    List<MessageQueue> mqAll = new ArrayList<>(queues);
                    List<String> cidAll = new ArrayList<>(ids);
                    if (sort) {
                        // What RebalanceImpl.rebalanceByTopic does before it calls the strategy.
                        Collections.sort(mqAll);
                        Collections.sort(cidAll);
                    }
                    List<MessageQueue> mine = strategy(name, virtualNodes, idcs).allocate("GID_TEST", current, mqAll, cidAll);
                    answer.append('Q');
                    for (int i = 0; i < mine.size(); i++) {
                        answer.append(i == 0 ? ' ' : ',').append(position.get(mine.get(i)));
                    }
                } catch (RuntimeException e) {
                    String message = e.getMessage() == null ? e.getClass().getName() : e.getMessage();
                    answer.append("E ").append(encode(message));
                }
            }
            out.println(answer);
        }
        out.flush();
    }
}
