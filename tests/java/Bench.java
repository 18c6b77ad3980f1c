import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.rocketmq.client.consumer.AllocateMessageQueueStrategy;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragelyByCircle;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueConsistentHash;
import org.apache.rocketmq.common.message.MessageQueue;

/**
 * The Java side of docs/performance.md: every consumer of a group calls allocate once on the same
 * sorted lists (the workload of the crate's `workload::bench_queues` and `workload::client_ids`).
 *
 * <p>Usage: {@code Bench STRATEGY QUEUES CONSUMERS [RUNS]}, STRATEGY one of AVG, AVG_BY_CIRCLE,
 * CONSISTENT_HASH (10 virtual nodes). Prints each timed run after one warm-up run, then the best.
 */
public class Bench {
    static long everyConsumerOnce(AllocateMessageQueueStrategy s, List<MessageQueue> mqAll, List<String> cidAll) {
        long allocated = 0;
        for (String current : cidAll) {
            allocated += s.allocate("GID", current, mqAll, cidAll).size();
        }
        return allocated;
    }

    public static void main(String[] args) {
        if (args.length < 3) {
            System.err.println("usage: Bench AVG|AVG_BY_CIRCLE|CONSISTENT_HASH QUEUES CONSUMERS [RUNS]");
            System.exit(2);
        }
        AllocateMessageQueueStrategy s;
        switch (args[0]) {
            case "AVG": s = new AllocateMessageQueueAveragely(); break;
            case "AVG_BY_CIRCLE": s = new AllocateMessageQueueAveragelyByCircle(); break;
            case "CONSISTENT_HASH": s = new AllocateMessageQueueConsistentHash(10); break;
            default: System.err.println("unknown strategy " + args[0]); System.exit(2); return;
        }
        int queues = Integer.parseInt(args[1]);
        int consumers = Integer.parseInt(args[2]);
        int runs = args.length > 3 ? Integer.parseInt(args[3]) : 5;
        int brokers = Math.max(1, queues / 1000);
        List<MessageQueue> mqAll = new ArrayList<>();
        for (int i = 0; i < queues; i++) {
            mqAll.add(new MessageQueue("TopicTest", "broker-" + (i % brokers), i / brokers));
        }
        List<String> cidAll = new ArrayList<>();
        for (int i = 0; i < consumers; i++) {
            cidAll.add("10.0." + (i / 256) + "." + (i % 256) + "@" + (10000 + i));
        }
        Collections.sort(mqAll);
        Collections.sort(cidAll);
        everyConsumerOnce(s, mqAll, cidAll);
        double best = Double.MAX_VALUE;
        for (int run = 0; run < runs; run++) {
            long start = System.nanoTime();
            long allocated = everyConsumerOnce(s, mqAll, cidAll);
            double ms = (System.nanoTime() - start) / 1e6;
            if (allocated != queues) {
                throw new AssertionError("allocated " + allocated + " of " + queues + " queues");
            }
            System.out.printf("%s %dx%d run %d: %.1f ms%n", args[0], queues, consumers, run, ms);
            best = Math.min(best, ms);
        }
        System.out.printf("%s %dx%d best of %d: %.1f ms%n", args[0], queues, consumers, runs, best);
    }
}
