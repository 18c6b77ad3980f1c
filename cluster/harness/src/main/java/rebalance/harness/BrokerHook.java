package rebalance.harness;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.rocketmq.broker.BrokerController;
import org.apache.rocketmq.broker.client.ClientChannelInfo;
import org.apache.rocketmq.broker.client.ConsumerGroupEvent;
import org.apache.rocketmq.broker.client.ConsumerGroupInfo;
import org.apache.rocketmq.broker.client.ConsumerIdsChangeListener;
import org.apache.rocketmq.common.AbortProcessException;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.body.LockBatchRequestBody;
import org.apache.rocketmq.remoting.protocol.body.LockBatchResponseBody;
import org.apache.rocketmq.remoting.protocol.body.UnlockBatchRequestBody;
import org.apache.rocketmq.remoting.protocol.header.GetConsumerListByGroupResponseBody;
import org.apache.rocketmq.remoting.protocol.heartbeat.HeartbeatData;

/**
 * One broker's observation and fault point: its server {@link RPCHook} (every request of the
 * group's consumers, before and after the processor, and the rules at {@code broker}) and its
 * {@link ConsumerIdsChangeListener} (every change of the member table, at the moment it
 * happens). Only records in the listener: it runs on the registering thread.
 */
final class BrokerHook implements RPCHook, ConsumerIdsChangeListener {
    private static final List<Integer> TRACED = List.of(RequestCode.HEART_BEAT,
            RequestCode.UNREGISTER_CLIENT, RequestCode.GET_CONSUMER_LIST_BY_GROUP,
            RequestCode.LOCK_BATCH_MQ, RequestCode.UNLOCK_BATCH_MQ,
            RequestCode.QUERY_CONSUMER_OFFSET, RequestCode.UPDATE_CONSUMER_OFFSET,
            RequestCode.QUERY_ASSIGNMENT);

    private final String broker;
    private final String group;
    private final BrokerController controller;
    /** Client ids by remote address, learned from heartbeats. */
    private final Map<String, String> clients = new ConcurrentHashMap<>();
    /**
     * Whether this process is the broker the trace names: a master until it fails over, its slave
     * from then on. A slave learns client ids while silent, since consumers heartbeat it too.
     */
    private volatile boolean serving;

    BrokerHook(String broker, String group, BrokerController controller, boolean serving) {
        this.broker = broker;
        this.group = group;
        this.controller = controller;
        this.serving = serving;
    }

    void serving(boolean serving) {
        this.serving = serving;
    }

    @Override
    public void doBeforeRequest(String remoteAddr, RemotingCommand request) {
        int code = request.getCode();
        if (code == RequestCode.HEART_BEAT && request.getBody() != null) {
            HeartbeatData hb = HeartbeatData.decode(request.getBody(), HeartbeatData.class);
            clients.put(remoteAddr, hb.getClientID());
        }
        if (!serving) {
            return;
        }
        String client = clients.get(remoteAddr);
        // Rules meet every request, traced or not: a proxy's pops and acknowledgements for its
        // gRPC clients (POP_MESSAGE, ACK_MESSAGE) are faulted here, not traced.
        if (TRACED.contains(code)) {
            Trace.emit("b.req", "broker", broker, "code", code, "client", client, "addr",
                    remoteAddr, "opaque", request.getOpaque(), "queues", requestQueues(request));
        }
        Rules.Action action = Rules.at("broker", code, client, broker, null);
        if (action != Rules.Action.PASS) {
            Trace.emit("b.fault", "broker", broker, "code", code, "client", client,
                    "opaque", request.getOpaque(), "action", action.name().toLowerCase());
            throw new AbortProcessException(ResponseCode.SYSTEM_ERROR, "injected by the harness");
        }
    }

    @Override
    public void doAfterResponse(String remoteAddr, RemotingCommand request, RemotingCommand response) {
        int code = request.getCode();
        if (!TRACED.contains(code) || response == null || !serving) {
            return;
        }
        Object detail = null;
        if (response.getCode() == ResponseCode.SUCCESS && response.getBody() != null) {
            if (code == RequestCode.GET_CONSUMER_LIST_BY_GROUP) {
                detail = GetConsumerListByGroupResponseBody.decode(response.getBody(),
                        GetConsumerListByGroupResponseBody.class).getConsumerIdList();
            } else if (code == RequestCode.LOCK_BATCH_MQ) {
                detail = lockedQueueNames(LockBatchResponseBody.decode(response.getBody(),
                        LockBatchResponseBody.class).getLockOKMQSet());
            }
        }
        Trace.emit("b.resp", "broker", broker, "code", code, "client", clients.get(remoteAddr),
                "opaque", request.getOpaque(), "status", response.getCode(), "detail", detail);
    }

    private static List<String> requestQueues(RemotingCommand request) {
        if (request.getBody() == null) {
            return null;
        }
        if (request.getCode() == RequestCode.LOCK_BATCH_MQ) {
            return lockedQueueNames(LockBatchRequestBody.decode(request.getBody(),
                    LockBatchRequestBody.class).getMqSet());
        }
        if (request.getCode() == RequestCode.UNLOCK_BATCH_MQ) {
            return lockedQueueNames(UnlockBatchRequestBody.decode(request.getBody(),
                    UnlockBatchRequestBody.class).getMqSet());
        }
        return null;
    }

    /**
     * The queues of a lock or an unlock, each named with its topic ({@code TOPIC@broker:id}): one
     * batch locks every topic's queues of a broker, the group's retry topic's among them, so a
     * name without its topic would stand for two queues.
     */
    static List<String> lockedQueueNames(Iterable<MessageQueue> queues) {
        return sortedNames(queues, mq -> mq.getTopic() + "@" + queueName(mq));
    }

    /** Queues of one topic, each named {@code broker:id}. */
    static List<String> queueNames(Iterable<MessageQueue> queues) {
        return sortedNames(queues, BrokerHook::queueName);
    }

    private static String queueName(MessageQueue mq) {
        return mq.getBrokerName() + ":" + mq.getQueueId();
    }

    private static List<String> sortedNames(Iterable<MessageQueue> queues,
            java.util.function.Function<MessageQueue, String> name) {
        List<String> names = new ArrayList<>();
        if (queues != null) {
            for (MessageQueue mq : queues) {
                names.add(name.apply(mq));
            }
        }
        names.sort(null);
        return names;
    }

    @Override
    public void handle(ConsumerGroupEvent event, String group, Object... args) {
        if (!this.group.equals(group) || !serving) {
            return;
        }
        String client = null;
        String addr = null;
        if (args != null && args.length > 0 && args[0] instanceof ClientChannelInfo info) {
            client = info.getClientId();
            addr = String.valueOf(info.getChannel().remoteAddress());
        }
        ConsumerGroupInfo info = controller.getConsumerManager().getConsumerGroupInfo(group);
        List<String> members = info == null ? List.of() : info.getAllClientId();
        members = new ArrayList<>(members);
        members.sort(null);
        Trace.emit("b.member", "broker", broker, "kind", event.name(), "client", client,
                "addr", addr, "members", members);
    }

    @Override
    public void shutdown() {}
}
