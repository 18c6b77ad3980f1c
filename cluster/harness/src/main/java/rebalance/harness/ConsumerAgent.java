package rebalance.harness;

import com.alibaba.fastjson2.JSONObject;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.apache.rocketmq.client.consumer.AllocateMessageQueueStrategy;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.ConsumeOrderlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.consumer.listener.MessageListenerOrderly;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragelyByCircle;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueConsistentHash;
import org.apache.rocketmq.client.impl.MQClientManager;
import org.apache.rocketmq.client.impl.consumer.RebalanceImpl;
import org.apache.rocketmq.client.impl.factory.MQClientInstance;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageClientIDSetter;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.common.message.MessageQueueAssignment;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.body.LockBatchRequestBody;
import org.apache.rocketmq.remoting.protocol.body.LockBatchResponseBody;
import org.apache.rocketmq.remoting.protocol.body.QueryAssignmentRequestBody;
import org.apache.rocketmq.remoting.protocol.body.QueryAssignmentResponseBody;
import org.apache.rocketmq.remoting.protocol.body.UnlockBatchRequestBody;
import org.apache.rocketmq.remoting.protocol.header.GetConsumerListByGroupResponseBody;
import org.apache.rocketmq.remoting.protocol.route.QueueData;
import org.apache.rocketmq.remoting.protocol.route.TopicRouteData;

/**
 * One consumer of the group in its own JVM, so that {@code kill -9}, {@code SIGSTOP} and two
 * processes sharing a client id are real. Observes through public extension points only: an
 * {@link RPCHook} (requests, responses, incoming notifications), a wrapping allocation strategy
 * (every client-side round), the message-queue listener and the message listener (each
 * delivery). A POP consumer (its file's {@code consumption}) asks the brokers for its assignment
 * and pops; its batches are traced with their messages' ids. Argument: the path of its consumer
 * file (JSON, written by the orchestrator).
 * Commands: {@code start}, {@code shutdown}, {@code subscribe}, {@code unsubscribe}, {@code
 * rule}, {@code release}.
 */
public final class ConsumerAgent implements Agents.Agent {
    private static final List<Integer> TRACED = List.of(RequestCode.HEART_BEAT,
            RequestCode.UNREGISTER_CLIENT, RequestCode.GET_CONSUMER_LIST_BY_GROUP,
            RequestCode.LOCK_BATCH_MQ, RequestCode.UNLOCK_BATCH_MQ,
            RequestCode.QUERY_CONSUMER_OFFSET, RequestCode.UPDATE_CONSUMER_OFFSET,
            RequestCode.GET_ROUTEINFO_BY_TOPIC, RequestCode.QUERY_ASSIGNMENT,
            RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, RequestCode.ACK_MESSAGE,
            RequestCode.CHANGE_MESSAGE_INVISIBLETIME);

    private final JSONObject spec;
    private final Map<String, String> peers;
    private final String clientId;
    private final DefaultMQPushConsumer consumer;
    private final Hook hook;
    /** Its listener ends a batch when its thread is interrupted (script: {@code listener}). */
    private final boolean stopsOnInterrupt;
    /**
     * A POP consumer (script: {@code consumption}): it asks the broker for its assignment and
     * pops, and its batches are traced with their messages' ids, which a revived message keeps
     * (its queue and offset are then the retry topic's).
     */
    private final boolean pop;

    private ConsumerAgent(JSONObject spec) throws Exception {
        this.spec = spec;
        this.peers = spec.getJSONObject("peers").to(Map.class);
        this.clientId = spec.getString("client_ip") + "@" + spec.getString("instance_name");
        hook = new Hook();
        consumer = new DefaultMQPushConsumer(spec.getString("group"), hook,
                new TracingStrategy(strategy(spec.getString("strategy"))));
        consumer.setNamesrvAddr(spec.getString("namesrv"));
        consumer.setClientIP(spec.getString("client_ip"));
        consumer.setInstanceName(spec.getString("instance_name"));
        consumer.setConsumeFromWhere(ConsumeFromWhere.valueOf(spec.getString("consume_from")));
        consumer.setConsumeThreadMin(4);
        consumer.setConsumeThreadMax(4);
        pop = "pop".equals(spec.getString("consumption"));
        // The group's mode on the brokers is POP; the client asks them only without its own
        // rebalance (RebalancePushImpl.clientRebalance).
        consumer.setClientRebalance(!pop);
        Settings.apply(consumer, spec.getJSONObject("client_config"));
        for (Object topic : spec.getJSONArray("topics")) {
            consumer.subscribe((String) topic, "*");
        }
        consumer.setMessageQueueListener((topic, mqAll, mqDivided) -> Trace.emit("c.mqchanged",
                "topic", topic, "divided", BrokerHook.queueNames(mqDivided),
                "table", BrokerHook.queueNames(tableOf(topic))));
        stopsOnInterrupt = Agents.stopsOnInterrupt(spec);
        if (spec.getBooleanValue("orderly")) {
            consumer.registerMessageListener((MessageListenerOrderly) (msgs, ctx) ->
                    consume(ctx.getMessageQueue(), msgs)
                            ? ConsumeOrderlyStatus.SUCCESS
                            : ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT);
        } else {
            consumer.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) ->
                    consume(ctx.getMessageQueue(), msgs)
                            ? ConsumeConcurrentlyStatus.CONSUME_SUCCESS
                            : ConsumeConcurrentlyStatus.RECONSUME_LATER);
        }
    }

    /**
     * The queues of {@code topic} in the process-queue table, a dropped one still there included:
     * what {@code messageQueueChanged} follows (it is called once a round has changed the table),
     * where its argument is the allocation, which holds a queue whose lock was refused or whose
     * offset could not be read, and lacks one whose removal waits for its running batch.
     */
    private List<MessageQueue> tableOf(String topic) {
        List<MessageQueue> queues = new ArrayList<>();
        RebalanceImpl rebalance = consumer.getDefaultMQPushConsumerImpl().getRebalanceImpl();
        Set<MessageQueue> table = new HashSet<>(rebalance.getProcessQueueTable().keySet());
        table.addAll(rebalance.getPopProcessQueueTable().keySet());
        for (MessageQueue mq : table) {
            if (mq.getTopic().equals(topic)) {
                queues.add(mq);
            }
        }
        return queues;
    }

    private static AllocateMessageQueueStrategy strategy(String name) {
        return switch (name) {
            case "AVG" -> new AllocateMessageQueueAveragely();
            case "AVG_BY_CIRCLE" -> new AllocateMessageQueueAveragelyByCircle();
            case "CONSISTENT_HASH" -> new AllocateMessageQueueConsistentHash();
            default -> throw new IllegalArgumentException("strategy " + name + " is not in the harness");
        };
    }

    /**
     * One delivery: its begin, the rules at {@code listener} (a gate holds the batch; a fault
     * makes the application fail it), the application's work, its end; whether it was
     * consumed. A listener that ignores its thread's interrupt (a graceful shutdown's {@code
     * shutdownNow}) works on to the end; one that stops ends the batch there, unconsumed
     * ({@code c.consume.interrupted}). A failed batch was delivered to the application, which
     * answers {@code RECONSUME_LATER} ({@code SUSPEND_CURRENT_QUEUE_A_MOMENT} orderly): its
     * {@code c.fault} (code 0, the broker of its queue) comes before its end.
     */
    private boolean consume(MessageQueue mq, List<MessageExt> msgs) {
        String queue = mq.getBrokerName() + ":" + mq.getQueueId();
        List<Long> offsets = new ArrayList<>();
        List<String> ids = new ArrayList<>();
        for (MessageExt m : msgs) {
            offsets.add(m.getQueueOffset());
            ids.add(MessageClientIDSetter.getUniqID(m));
        }
        // A POP batch's queue is its assignment's (queue id -1) and may hold messages of several
        // queues and of the retry topic: its messages are named by id.
        Object[] batch = pop
                ? new Object[] {"topic", mq.getTopic(), "queue", queue, "offsets", offsets, "msgs", ids}
                : new Object[] {"topic", mq.getTopic(), "queue", queue, "offsets", offsets};
        Trace.emit("c.consume.begin", batch);
        Rules.Action action =
                Rules.at("listener", 0, clientId, mq.getBrokerName(), queue, !stopsOnInterrupt);
        if (action != Rules.Action.PASS) {
            Trace.emit("c.fault", "code", 0, "peer", mq.getBrokerName(), "action",
                    action.name().toLowerCase());
            Trace.emit("c.consume.end", batch);
            return false;
        }
        // The application's work on the batch, the workload of the script.
        Agents.work(spec.getLongValue("consume_ms") * msgs.size(), stopsOnInterrupt);
        if (stopsOnInterrupt && Thread.currentThread().isInterrupted()) {
            Trace.emit("c.consume.interrupted", batch);
            return false;
        }
        Trace.emit("c.consume.end", batch);
        return true;
    }

    public static void main(String[] args) throws Exception {
        Agents.run(args, ConsumerAgent::new);
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
                if ("first".equals(spec.getString("broker_pick"))) {
                    pickFirstBroker();
                }
                consumer.start();
                Trace.emit("c.life", "state", "started", "client", clientId);
            }
            case "shutdown" -> {
                Trace.emit("c.life", "state", "stopping", "client", clientId);
                consumer.shutdown();
                Trace.emit("c.life", "state", "stopped", "client", clientId);
            }
            case "subscribe" -> consumer.subscribe(args.getString("topic"), "*");
            case "unsubscribe" -> consumer.unsubscribe(args.getString("topic"));
            case "rule" -> Rules.install(args.getJSONObject("rule"));
            case "release" -> Rules.release(args.getString("rule"));
            default -> throw new IllegalArgumentException("unknown command " + cmd);
        }
    }

    /**
     * Makes every rebalance of this client ask the first broker of its route: the client's
     * instance (the one {@code start()} will use, keyed by client id) gets a {@link Random}
     * whose every pick is 0 in place of its own, so that a race on which broker is asked is
     * driven, not hoped for. Reflection on a private field: fails loudly if RocketMQ renames it.
     */
    private void pickFirstBroker() throws ReflectiveOperationException {
        MQClientInstance instance =
                MQClientManager.getInstance().getOrCreateMQClientInstance(consumer, hook);
        Field random = MQClientInstance.class.getDeclaredField("random");
        random.setAccessible(true);
        random.set(instance, new Random() {
            @Override
            public int nextInt(int bound) {
                return 0;
            }
        });
        Trace.emit("c.pick", "broker_pick", "first");
    }

    /** Every client-side allocation round, with its inputs; the rules at {@code alloc}. */
    private final class TracingStrategy implements AllocateMessageQueueStrategy {
        private final AllocateMessageQueueStrategy inner;

        TracingStrategy(AllocateMessageQueueStrategy inner) {
            this.inner = inner;
        }

        @Override
        public List<MessageQueue> allocate(String group, String currentCID,
                List<MessageQueue> mqAll, List<String> cidAll) {
            List<MessageQueue> result = inner.allocate(group, currentCID, mqAll, cidAll);
            String topic = mqAll.isEmpty() ? null : mqAll.get(0).getTopic();
            Trace.emit("c.alloc", "topic", topic, "cid", currentCID, "mq_all",
                    BrokerHook.queueNames(mqAll), "cid_all", cidAll, "result",
                    BrokerHook.queueNames(result));
            Rules.at("alloc", 0, clientId, null, null);
            return result;
        }

        @Override
        public String getName() {
            return inner.getName();
        }
    }

    /** Requests and responses of this client, and the notifications it receives. */
    private final class Hook implements RPCHook {
        @Override
        public void doBeforeRequest(String remoteAddr, RemotingCommand request) {
            int code = request.getCode();
            if (!TRACED.contains(code)) {
                return;
            }
            String peer = peers.getOrDefault(remoteAddr, remoteAddr);
            if (code == RequestCode.NOTIFY_CONSUMER_IDS_CHANGED) {
                Trace.emit("c.notify", "peer", peer);
            } else {
                Trace.emit("c.req", "code", code, "peer", peer, "opaque", request.getOpaque(),
                        "queues", requestQueues(request));
            }
            Rules.Action action = Rules.at("client", code, clientId, peer, null);
            if (action != Rules.Action.PASS) {
                Trace.emit("c.fault", "code", code, "peer", peer, "action",
                        action.name().toLowerCase());
                // Thrown before the request is sent (or, for an incoming notification, before
                // it is processed): the request fails, or the notification is lost.
                throw new IllegalStateException("injected by the harness");
            }
        }

        @Override
        public void doAfterResponse(String remoteAddr, RemotingCommand request,
                RemotingCommand response) {
            int code = request.getCode();
            if (!TRACED.contains(code) || code == RequestCode.NOTIFY_CONSUMER_IDS_CHANGED) {
                return;
            }
            Object detail = null;
            if (response != null && response.getCode() == ResponseCode.SUCCESS
                    && response.getBody() != null) {
                if (code == RequestCode.GET_CONSUMER_LIST_BY_GROUP) {
                    detail = GetConsumerListByGroupResponseBody.decode(response.getBody(),
                            GetConsumerListByGroupResponseBody.class).getConsumerIdList();
                } else if (code == RequestCode.LOCK_BATCH_MQ) {
                    detail = BrokerHook.lockedQueueNames(LockBatchResponseBody.decode(
                            response.getBody(), LockBatchResponseBody.class).getLockOKMQSet());
                } else if (code == RequestCode.QUERY_ASSIGNMENT) {
                    // A broker that knows no route of the topic yet (one just restarted)
                    // answers no set at all: traced as none assigned. A hook that threw
                    // would fail the call and close its channel.
                    List<MessageQueue> assigned = new ArrayList<>();
                    Set<MessageQueueAssignment> answer = QueryAssignmentResponseBody.decode(
                            response.getBody(), QueryAssignmentResponseBody.class)
                            .getMessageQueueAssignments();
                    for (MessageQueueAssignment a : answer == null
                            ? Set.<MessageQueueAssignment>of() : answer) {
                        if (a.getMessageQueue() != null) {
                            assigned.add(a.getMessageQueue());
                        }
                    }
                    detail = BrokerHook.queueNames(assigned);
                } else if (code == RequestCode.GET_ROUTEINFO_BY_TOPIC) {
                    // The route answered: each broker's read queues.
                    Map<String, Integer> route = new java.util.TreeMap<>();
                    for (QueueData q : TopicRouteData.decode(response.getBody(),
                            TopicRouteData.class).getQueueDatas()) {
                        route.put(q.getBrokerName(), q.getReadQueueNums());
                    }
                    detail = route;
                }
            }
            String topic = null;
            if (code == RequestCode.GET_ROUTEINFO_BY_TOPIC && request.getExtFields() != null) {
                topic = request.getExtFields().get("topic");
            } else if (code == RequestCode.QUERY_ASSIGNMENT && request.getBody() != null) {
                topic = QueryAssignmentRequestBody.decode(request.getBody(),
                        QueryAssignmentRequestBody.class).getTopic();
            }
            Trace.emit("c.resp", "code", code, "peer", peers.getOrDefault(remoteAddr, remoteAddr),
                    "opaque", request.getOpaque(), "status",
                    response == null ? null : response.getCode(), "detail", detail,
                    "topic", topic);
        }

        private List<String> requestQueues(RemotingCommand request) {
            if (request.getBody() == null) {
                return null;
            }
            Set<MessageQueue> set = null;
            if (request.getCode() == RequestCode.LOCK_BATCH_MQ) {
                set = LockBatchRequestBody.decode(request.getBody(), LockBatchRequestBody.class)
                        .getMqSet();
            } else if (request.getCode() == RequestCode.UNLOCK_BATCH_MQ) {
                set = UnlockBatchRequestBody.decode(request.getBody(),
                        UnlockBatchRequestBody.class).getMqSet();
            }
            return set == null ? null : BrokerHook.lockedQueueNames(set);
        }
    }
}
