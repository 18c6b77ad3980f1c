package rebalance.harness;

import com.alibaba.fastjson2.JSONObject;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.consumer.ConsumeResult;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.FilterExpressionType;
import org.apache.rocketmq.client.apis.consumer.MessageListener;
import org.apache.rocketmq.client.apis.consumer.PushConsumer;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.java.impl.ClientImpl;
import org.apache.rocketmq.client.java.message.MessageViewImpl;

/**
 * One consumer of a FIFO group, or of a concurrent POP group that runs gRPC clients, in its own
 * JVM: the gRPC push consumer of RocketMQ 5.x ({@code rocketmq-client-java}), through the proxy
 * the cluster runs. RocketMQ's remoting client never pops for an orderly listener, so a FIFO
 * group's consumers are always these. The client has no
 * request hook: it is observed at its message listener (each delivery, one message, begun and
 * ended, with its queue, offset and id) and in its life. Its client id is the one the client
 * makes up ({@code host@pid@index@nanotime}), known once it is built, before it starts: the
 * agent builds it as the client's builder does, but does not start it there (the builder's
 * {@code build()} does both).
 * Argument: the path of its consumer file (JSON, written by the orchestrator). Commands:
 * {@code start}, {@code shutdown}, {@code rule}, {@code release}.
 */
public final class GrpcConsumerAgent implements Agents.Agent {
    private final JSONObject spec;
    private final ClientImpl consumer;
    private final String clientId;
    /** Its listener ends a batch when its thread is interrupted (script: {@code listener}). */
    private final boolean stopsOnInterrupt;

    private GrpcConsumerAgent(JSONObject spec) throws ReflectiveOperationException {
        this.spec = spec;
        stopsOnInterrupt = Agents.stopsOnInterrupt(spec);
        ClientConfiguration config = ClientConfiguration.newBuilder()
                .setEndpoints(spec.getString("endpoint"))
                // The proxy's gRPC port takes plain text on loopback.
                .enableSsl(false)
                .setRequestTimeout(Duration.ofSeconds(3))
                .build();
        Map<String, FilterExpression> subscriptions = new LinkedHashMap<>();
        for (Object topic : spec.getJSONArray("topics")) {
            subscriptions.put((String) topic, new FilterExpression("*", FilterExpressionType.TAG));
        }
        consumer = pushConsumer(config, spec.getString("group"), subscriptions, this::consume);
        clientId = consumer.getClientId().toString();
    }

    /**
     * The push consumer the builder would build, not started: its class is package-private (a
     * public constructor). Reflection: fails loudly if the client renames it.
     */
    private static ClientImpl pushConsumer(ClientConfiguration config, String group,
            Map<String, FilterExpression> subscriptions, MessageListener listener)
            throws ReflectiveOperationException {
        var constructor = Class.forName("org.apache.rocketmq.client.java.impl.consumer.PushConsumerImpl")
                .getConstructor(ClientConfiguration.class, String.class, Map.class,
                        MessageListener.class, int.class, int.class, int.class);
        constructor.setAccessible(true);
        // One message cached a queue (the builder's default is 1024): the client receives a queue
        // again only once its message is acknowledged, as the model's consumer pops a queue again
        // only once its batch ended. With more, a receive the client sends while its listener
        // runs can wait at the broker and take the message again when the queue unblocks. The
        // builder's 64 MiB; one consumption thread, since with one message cached a queue the
        // client runs one message of a queue at a time in any case.
        return (ClientImpl) constructor.newInstance(config, group, subscriptions, listener, 1,
                64 * 1024 * 1024, 1);
    }

    /**
     * One delivery: its begin, the rules at {@code listener} (a gate holds it; a fault makes the
     * application fail it, {@code FAILURE}), the application's work, its end. A listener that
     * stops on an interrupt ends the delivery there, unconsumed ({@code c.consume.interrupted}).
     */
    private ConsumeResult consume(MessageView message) {
        MessageViewImpl view = (MessageViewImpl) message;
        String broker = view.getMessageQueue().getBroker().getName();
        String queue = broker + ":" + view.getMessageQueue().getQueueId();
        Object[] batch = {"topic", message.getTopic(), "queue", queue, "offsets",
                List.of(view.getOffset()), "msgs", List.of(message.getMessageId().toString())};
        Trace.emit("c.consume.begin", batch);
        Rules.Action action = Rules.at("listener", 0, clientId, broker, queue, !stopsOnInterrupt);
        if (action != Rules.Action.PASS) {
            Trace.emit("c.fault", "code", 0, "peer", broker, "action", action.name().toLowerCase());
            Trace.emit("c.consume.end", batch);
            return ConsumeResult.FAILURE;
        }
        Agents.work(spec.getLongValue("consume_ms"), stopsOnInterrupt);
        if (stopsOnInterrupt && Thread.currentThread().isInterrupted()) {
            Trace.emit("c.consume.interrupted", batch);
            return ConsumeResult.FAILURE;
        }
        Trace.emit("c.consume.end", batch);
        return ConsumeResult.SUCCESS;
    }

    public static void main(String[] args) throws Exception {
        Agents.run(args, GrpcConsumerAgent::new);
    }

    @Override
    public String clientId() {
        return clientId;
    }

    @Override
    public void handle(String cmd, JSONObject args) throws Exception {
        switch (cmd) {
            case "start" -> {
                Trace.emit("c.life", "state", "starting", "client", clientId);
                consumer.startAsync().awaitRunning();
                Trace.emit("c.life", "state", "started", "client", clientId);
            }
            case "shutdown" -> {
                Trace.emit("c.life", "state", "stopping", "client", clientId);
                ((PushConsumer) consumer).close();
                Trace.emit("c.life", "state", "stopped", "client", clientId);
            }
            case "rule" -> Rules.install(args.getJSONObject("rule"));
            case "release" -> Rules.release(args.getString("rule"));
            default -> throw new IllegalArgumentException("unknown command " + cmd);
        }
    }
}
