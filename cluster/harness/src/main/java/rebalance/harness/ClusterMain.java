package rebalance.harness;

import com.alibaba.fastjson2.JSON;
import com.alibaba.fastjson2.JSONArray;
import com.alibaba.fastjson2.JSONObject;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.broker.BrokerController;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.BrokerConfig;
import org.apache.rocketmq.common.MQVersion;
import org.apache.rocketmq.common.MixAll;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.TopicAttributes;
import org.apache.rocketmq.common.attribute.TopicMessageType;
import org.apache.rocketmq.common.message.MessageAccessor;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.common.message.MessageRequestMode;
import org.apache.rocketmq.common.namesrv.NamesrvConfig;
import org.apache.rocketmq.namesrv.NamesrvController;
import org.apache.rocketmq.remoting.netty.NettyClientConfig;
import org.apache.rocketmq.remoting.netty.NettyServerConfig;
import org.apache.rocketmq.remoting.protocol.body.SetMessageRequestModeRequestBody;
import org.apache.rocketmq.remoting.protocol.route.QueueData;
import org.apache.rocketmq.remoting.protocol.route.TopicRouteData;
import org.apache.rocketmq.remoting.protocol.subscription.SubscriptionGroupConfig;
import org.apache.rocketmq.store.config.BrokerRole;
import org.apache.rocketmq.store.config.MessageStoreConfig;

/**
 * The cluster JVM: the name servers and brokers of one run, in process, as RocketMQ's own
 * integration tests start them (constructors, a temporary store, small files), on the fixed
 * loopback ports the orchestrator picked, so that a restarted broker keeps its address.
 *
 * <p>Argument: the path of the run's cluster file (JSON, written by the orchestrator). Hooks are
 * installed between {@code initialize()} and {@code start()}. It traces {@code ready} once every
 * broker's queues are in every name server's route, then serves commands (see {@link Commands}):
 * {@code produce}, {@code stream}, {@code restart_broker}, {@code stop_broker}, {@code start_broker},
 * {@code fail_over}, {@code sync_slave}, {@code evict}, {@code lose_disk}, {@code lose_order_info},
 * {@code proxy_forgets_group}, {@code cut},
 * {@code heal}, {@code rule}, {@code release}, {@code snapshot}. A FIFO group's run (its file's
 * {@code fifo}) has FIFO topics and the group consumes orderly. A run of gRPC consumers (its
 * file's {@code proxy}: a FIFO group's, or a concurrent POP group's) has a proxy ({@link
 * ProxyHost}) that serves them once the routes are complete.
 */
public final class ClusterMain {
    /** The brokers' cluster name. */
    private static final String CLUSTER = "harness";

    private final JSONObject spec;
    private final String group;
    private final Map<String, NamesrvController> nameServers = new LinkedHashMap<>();
    /** The brokers the trace names, by name: each master, or its slave once it fails over. */
    private final Map<String, BrokerController> brokers = new LinkedHashMap<>();
    /** The slaves of the brokers that have one, by the broker's name. */
    private final Map<String, BrokerController> slaves = new LinkedHashMap<>();
    private final Set<String> failedOver = new HashSet<>();
    private final Map<BrokerController, BrokerHook> hooks = new HashMap<>();
    private final Map<String, Relay> relays = new LinkedHashMap<>();
    private DefaultMQProducer producer;
    /** The proxy of a run of gRPC consumers, once started. */
    private ProxyHost proxy;
    /** The steady producer of {@code stream}: one round of sends a period, while it runs. */
    private final ScheduledExecutorService streamer = Executors.newSingleThreadScheduledExecutor();
    private ScheduledFuture<?> stream;

    private ClusterMain(JSONObject spec) {
        this.spec = spec;
        this.group = spec.getString("group");
    }

    public static void main(String[] args) throws Exception {
        Trace.init("cluster");
        JSONObject spec =
                JSON.parseObject(Files.readString(Path.of(args[0]), StandardCharsets.UTF_8));
        ClusterMain cluster = new ClusterMain(spec);
        try {
            cluster.start();
        } catch (Exception e) {
            Trace.emit("failed", "reason", String.valueOf(e));
            e.printStackTrace();
            System.exit(e instanceof IllegalArgumentException ? 2 : 3);
        }
        Commands.serve(cluster::handle);
        cluster.shutdown();
        System.exit(0);
    }

    private void start() throws Exception {
        Trace.emit("topology", "schema", Trace.SCHEMA, "rocketmq_version",
                MQVersion.getVersionDesc(MQVersion.CURRENT_VERSION).substring(1).replace('_', '.'), "jdk",
                System.getProperty("java.version"), "spec", spec);
        for (Object o : spec.getJSONArray("name_servers")) {
            JSONObject ns = (JSONObject) o;
            startNameServer(ns);
        }
        for (Object o : spec.getJSONArray("relays")) {
            JSONObject r = (JSONObject) o;
            Relay relay = new Relay(r.getString("name"), r.getIntValue("port"),
                    r.getIntValue("target_port"));
            relay.start();
            relays.put(r.getString("name"), relay);
        }
        for (Object o : spec.getJSONArray("brokers")) {
            JSONObject b = (JSONObject) o;
            // A broker that joins later is started by the script.
            if (!b.getBooleanValue("late")) {
                startBroker(b);
            }
        }
        producer = new DefaultMQProducer("harness-producer");
        producer.setNamesrvAddr(nameServerAddress(spec.getJSONArray("name_servers").getJSONObject(0)));
        producer.setInstanceName("harness-producer");
        producer.setClientIP("127.0.0.1");
        producer.start();
        awaitRoutes();
        if (spec.containsKey("proxy")) {
            awaitRoute(CLUSTER);
            proxy = ProxyHost.start(spec.getJSONObject("proxy"), CLUSTER,
                    nameServerAddress(spec.getJSONArray("name_servers").getJSONObject(0)),
                    new File(spec.getString("run_dir"), "proxy"));
        }
        Trace.emit("ready");
    }

    private static String nameServerAddress(JSONObject ns) {
        return "127.0.0.1:" + ns.getIntValue("port");
    }

    private void startNameServer(JSONObject ns) throws Exception {
        String name = ns.getString("name");
        File dir = new File(spec.getString("run_dir"), name);
        dir.mkdirs();
        NamesrvConfig config = new NamesrvConfig();
        config.setKvConfigPath(new File(dir, "kvConfig.json").getPath());
        config.setConfigStorePath(new File(dir, "namesrv.properties").getPath());
        // A slave acts as its broker's master once none is registered (fail_over).
        config.setSupportActingMaster(hasSlaves());
        Settings.apply(config, spec.getJSONObject("name_server_config"));
        NettyServerConfig netty = new NettyServerConfig();
        netty.setListenPort(ns.getIntValue("port"));
        NamesrvController controller = new NamesrvController(config, netty);
        if (!controller.initialize()) {
            throw new IllegalStateException("name server " + name + " did not initialize");
        }
        controller.getRemotingServer().registerRPCHook(new NameServerHook(name));
        controller.start();
        nameServers.put(name, controller);
        Trace.emit("ns.life", "ns", name, "state", "started", "port", ns.getIntValue("port"));
    }

    private boolean hasSlaves() {
        return spec.getJSONArray("brokers").stream()
                .anyMatch(o -> ((JSONObject) o).containsKey("slave"));
    }

    private JSONObject brokerSpec(String name) {
        for (Object o : spec.getJSONArray("brokers")) {
            if (((JSONObject) o).getString("name").equals(name)) {
                return (JSONObject) o;
            }
        }
        throw new IllegalArgumentException("no broker " + name);
    }

    private void startBroker(JSONObject b) throws Exception {
        String name = b.getString("name");
        if (brokers.containsKey(name)) {
            throw new IllegalStateException("broker " + name + " is running");
        }
        if (failedOver.contains(name)) {
            throw new IllegalStateException("broker " + name + " has failed over: its slave serves");
        }
        JSONObject slave = b.getJSONObject("slave");
        // start() opens the port first: heartbeats register before it returns.
        Trace.emit("b.life", "broker", name, "state", "starting", "port", b.getIntValue("port"));
        BrokerController master = launch(b, null);
        brokers.put(name, master);
        Trace.emit("b.life", "broker", name, "state", "started", "port", b.getIntValue("port"));
        // Its slave is silent until it serves in the master's place (fail_over).
        if (slave != null && !slaves.containsKey(name)) {
            slaves.put(name, launch(b, slave));
        }
    }

    /**
     * Starts the master of broker spec {@code b}, or, given its {@code slave} spec, the slave of
     * the pair: broker id 1, replicating the master's commit log over HA, serving reads (pulls)
     * and, once no master is registered, acting as the master (RocketMQ's slave-acting-master
     * mode: the name servers route it as broker id 0, and it answers locks, unlocks and offset
     * queries from its own tables).
     */
    private BrokerController launch(JSONObject b, JSONObject slave) throws Exception {
        String name = b.getString("name");
        JSONObject self = slave == null ? b : slave;
        File store = new File(spec.getString("run_dir"), slave == null ? name : name + "-slave");
        BrokerConfig config = new BrokerConfig();
        config.setBrokerName(name);
        config.setBrokerClusterName(CLUSTER);
        config.setBrokerIP1("127.0.0.1");
        config.setNamesrvAddr(String.join(";", b.getJSONArray("name_server_addresses").toJavaList(String.class)));
        config.setAutoCreateTopicEnable(false);
        config.setTraceTopicEnable(false);
        if (b.containsKey("slave")) {
            config.setBrokerIP2("127.0.0.1");
            config.setEnableSlaveActingMaster(true);
            // The pre-online check is for a master that comes back; no run brings one back.
            config.setSkipPreOnline(true);
        }
        Settings.apply(config, spec.getJSONObject("broker_config"));
        MessageStoreConfig storeConfig = new MessageStoreConfig();
        storeConfig.setStorePathRootDir(store.getPath());
        storeConfig.setStorePathCommitLog(new File(store, "commitlog").getPath());
        storeConfig.setHaListenPort(self.getIntValue("ha_port"));
        storeConfig.setMappedFileSizeCommitLog(4 * 1024 * 1024);
        storeConfig.setMappedFileSizeConsumeQueue(6000 * 20);
        storeConfig.setMaxIndexNum(1000);
        storeConfig.setMaxHashSlotNum(4000);
        // POP needs the timer wheel: a pop's checkpoint waits in it until its invisible time
        // ends (the broker refuses POP_MESSAGE and skips every revive without it).
        boolean pop = "pop".equals(spec.getString("consumption"));
        storeConfig.setTimerWheelEnable(pop);
        storeConfig.setMappedFileSizeTimerLog(4 * 1024 * 1024);
        Settings.apply(storeConfig, spec.getJSONObject("store_config"));
        if (slave != null) {
            config.setBrokerId(1);
            config.setSlaveReadEnable(true);
            // Its master's HA address comes with its registration, as in a deployment.
            storeConfig.setBrokerRole(BrokerRole.SLAVE);
        }
        NettyServerConfig netty = new NettyServerConfig();
        netty.setListenPort(self.getIntValue("port"));
        BrokerController controller =
                new BrokerController(config, netty, new NettyClientConfig(), storeConfig);
        if (!controller.initialize()) {
            throw new IllegalStateException("broker " + name + (slave == null ? "" : "'s slave")
                    + " did not initialize");
        }
        BrokerHook hook = new BrokerHook(name, group, controller, slave == null);
        hooks.put(controller, hook);
        controller.registerServerRPCHook(hook);
        controller.getConsumerManager().appendConsumerIdsChangeListener(hook);
        // Topics before start(), so that the first registration carries them.
        boolean fifo = spec.getBooleanValue("fifo");
        if (fifo) {
            // What makes the group FIFO: the proxy tells its clients so, and pops in order.
            SubscriptionGroupConfig orderly = new SubscriptionGroupConfig();
            orderly.setGroupName(group);
            orderly.setConsumeMessageOrderly(true);
            controller.getSubscriptionGroupManager().updateSubscriptionGroupConfig(orderly);
        }
        for (Object o : spec.getJSONArray("topics")) {
            JSONObject t = (JSONObject) o;
            if (t.getJSONArray("brokers").contains(name)) {
                int queues = t.getIntValue("queues");
                TopicConfig topic = new TopicConfig(t.getString("name"), queues, queues);
                if (fifo) {
                    // As the admin API alters it: a created topic takes only added attributes.
                    topic.setAttributes(Map.of("+" + TopicAttributes.TOPIC_MESSAGE_TYPE_ATTRIBUTE.getName(),
                            TopicMessageType.FIFO.getValue()));
                }
                controller.getTopicConfigManager().updateTopicConfig(topic);
                if (pop) {
                    popMode(controller, t.getString("name"));
                }
            }
        }
        controller.start();
        return controller;
    }

    /**
     * The group's mode on {@code topic} set to POP, as {@code mqadmin setConsumeMode} sets it
     * ({@code SET_MESSAGE_REQUEST_MODE}), in process: {@code QUERY_ASSIGNMENT} then answers
     * {@code allocate4Pop}'s assignment, every queue of the broker as queue id -1 at the default
     * {@code popShareQueueNum} (-1).
     */
    private void popMode(BrokerController controller, String topic) {
        SetMessageRequestModeRequestBody body = new SetMessageRequestModeRequestBody();
        body.setTopic(topic);
        body.setConsumerGroup(group);
        body.setMode(MessageRequestMode.POP);
        body.setPopShareQueueNum(-1);
        controller.getQueryAssignmentProcessor().getMessageRequestModeManager()
                .setMessageRequestMode(topic, group, body);
    }

    private void stopBroker(String name) {
        BrokerController controller = brokers.remove(name);
        if (controller == null) {
            throw new IllegalStateException("broker " + name + " is not running");
        }
        Trace.emit("b.life", "broker", name, "state", "stopping");
        controller.shutdown();
        Trace.emit("b.life", "broker", name, "state", "stopped");
    }

    /**
     * Broker {@code name}'s master fails: its hook falls silent, its slave is traced as the broker
     * from then on, and it shuts down (unregistering from the name servers), the slave serving in
     * its place. Done once every name server routes the slave as the broker's master.
     */
    private void failOver(String name) throws Exception {
        BrokerController slave = slaves.get(name);
        BrokerController master = brokers.get(name);
        if (slave == null || master == null || failedOver.contains(name)) {
            throw new IllegalStateException("broker " + name + " has no running master with a slave");
        }
        awaitReplicated(name, master, slave);
        // The slave is the broker from the failover on, through the master's
        // shutdown (it unregisters first, then closes its channels): what the
        // slave's tables do meanwhile is the broker's.
        hooks.get(master).serving(false);
        hooks.get(slave).serving(true);
        failedOver.add(name);
        brokers.put(name, slave);
        master.shutdown();
        String address = "127.0.0.1:" + brokerSpec(name).getJSONObject("slave").getIntValue("port");
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (!routedAsMaster(name, address)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the name servers never routed " + name
                        + "'s slave as its master");
            }
            Thread.sleep(50);
        }
    }

    /**
     * Waits until the slave has every message of the master's queues: a run fails the master
     * over at a step of its script, not in the middle of a replication it cannot see.
     */
    private void awaitReplicated(String name, BrokerController master, BrokerController slave)
            throws Exception {
        long deadline = System.nanoTime() + 60_000_000_000L;
        for (Object o : spec.getJSONArray("topics")) {
            JSONObject t = (JSONObject) o;
            if (!t.getJSONArray("brokers").contains(name)) {
                continue;
            }
            String topic = t.getString("name");
            for (int q = 0; q < t.getIntValue("queues"); q++) {
                long max = master.getMessageStore().getMaxOffsetInQueue(topic, q);
                while (slave.getMessageStore().getMaxOffsetInQueue(topic, q) < max) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException(name + "'s slave never replicated "
                                + topic + " queue " + q + " up to offset " + max);
                    }
                    Thread.sleep(50);
                }
            }
        }
    }

    private boolean routedAsMaster(String name, String address) {
        for (NamesrvController ns : nameServers.values()) {
            for (Object o : spec.getJSONArray("topics")) {
                JSONObject t = (JSONObject) o;
                if (!t.getJSONArray("brokers").contains(name)) {
                    continue;
                }
                TopicRouteData route =
                        ns.getRouteInfoManager().pickupTopicRouteData(t.getString("name"));
                boolean routed = route != null && route.getBrokerDatas().stream().anyMatch(
                        d -> d.getBrokerName().equals(name)
                                && address.equals(d.getBrokerAddrs().get(MixAll.MASTER_ID)));
                if (!routed) {
                    return false;
                }
            }
        }
        return true;
    }

    /**
     * Broker {@code name}'s slave copies the master's tables now ({@code SlaveSynchronize.syncAll},
     * which RocketMQ runs once a minute in master-slave mode, every 10 s with a controller): the
     * consumer offsets it will serve after a failover are those of the last copy.
     */
    private void syncSlave(String name) {
        BrokerController slave = slaves.get(name);
        if (slave == null || failedOver.contains(name)) {
            throw new IllegalStateException("broker " + name + " has no slave copying a master");
        }
        slave.getSlaveSynchronize().syncAll();
    }

    /** Waits until every name server routes every topic's queues on every broker meant to. */
    private void awaitRoutes() throws InterruptedException {
        long deadline = System.nanoTime() + 120_000_000_000L;
        long nextRegistration = 0;
        while (System.nanoTime() < deadline) {
            if (routesComplete()) {
                return;
            }
            // A broker's periodic registration is at least 10 s apart: ask for one now.
            if (System.nanoTime() > nextRegistration) {
                for (BrokerController b : brokers.values()) {
                    b.registerBrokerAll(true, false, true);
                }
                nextRegistration = System.nanoTime() + 1_000_000_000L;
            }
            Thread.sleep(50);
        }
        throw new IllegalStateException("the name servers never routed every broker's queues");
    }

    /**
     * Waits until the first name server routes {@code topic}: the proxy's heartbeat syncer
     * needs the route of the topic named after the cluster, which each broker creates.
     */
    private void awaitRoute(String topic) throws InterruptedException {
        NamesrvController ns = nameServers.values().iterator().next();
        long deadline = System.nanoTime() + 120_000_000_000L;
        while (ns.getRouteInfoManager().pickupTopicRouteData(topic) == null) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the name server never routed topic " + topic);
            }
            for (BrokerController b : brokers.values()) {
                b.registerBrokerAll(true, false, true);
            }
            Thread.sleep(200);
        }
    }

    private boolean routesComplete() {
        for (Map.Entry<String, NamesrvController> ns : nameServers.entrySet()) {
            for (Object o : spec.getJSONArray("topics")) {
                JSONObject t = (JSONObject) o;
                TopicRouteData route =
                        ns.getValue().getRouteInfoManager().pickupTopicRouteData(t.getString("name"));
                List<String> expected = new ArrayList<>();
                for (Object b : t.getJSONArray("brokers")) {
                    if (brokers.containsKey((String) b)
                            && brokerSpec((String) b).getJSONArray("name_servers").contains(ns.getKey())) {
                        expected.add((String) b);
                    }
                }
                List<String> routed = new ArrayList<>();
                if (route != null) {
                    for (QueueData q : route.getQueueDatas()) {
                        routed.add(q.getBrokerName());
                    }
                }
                if (!routed.containsAll(expected)) {
                    return false;
                }
            }
        }
        return true;
    }

    private void handle(String cmd, JSONObject args) throws Exception {
        switch (cmd) {
            case "produce" -> {
                JSONObject topic = topic(args.getString("topic"));
                for (int i = 0; i < args.getIntValue("count"); i++) {
                    sendRound(topic);
                }
            }
            case "stream" -> stream(args);
            case "stop_broker" -> stopBroker(args.getString("broker"));
            case "start_broker" -> {
                startBroker(brokerSpec(args.getString("broker")));
                awaitRoutes();
            }
            case "restart_broker" -> {
                String name = args.getString("broker");
                stopBroker(name);
                // The downtime is the scenario's parameter, not a wait for an event.
                Thread.sleep(args.getLongValue("downtime_ms"));
                startBroker(brokerSpec(name));
                awaitRoutes();
            }
            case "fail_over" -> failOver(args.getString("broker"));
            case "sync_slave" -> syncSlave(args.getString("broker"));
            case "route" -> route(args.getString("broker"), args.getString("topic"),
                    args.getIntValue("queues"));
            case "evict" -> evict(args.getString("broker"), args.getString("topic"));
            case "lose_disk" -> lose(args.getString("broker"), "consumerOffset.json");
            case "lose_order_info" -> lose(args.getString("broker"), "consumerOrderInfo.json");
            case "proxy_forgets_group" -> proxyForgetsGroup(args.getLongValue("timeout_ms"));
            case "cut" -> relay(args).cut();
            case "heal" -> relay(args).heal();
            case "rule" -> Rules.install(args.getJSONObject("rule"));
            case "release" -> Rules.release(args.getString("rule"));
            case "snapshot" -> snapshot();
            default -> throw new IllegalArgumentException("unknown command " + cmd);
        }
    }

    /**
     * Reads the proxy's config of the group, as its clients' receives do, until the proxy holds
     * none: each read past the cache's refresh interval starts a reload, and a reload finds no
     * config only while the proxy's route of the cluster lists no broker to ask. So the race
     * between a client's receive and the outage is decided here, by the harness, rather than by
     * when the clients happen to receive.
     */
    private void proxyForgetsGroup(long timeoutMs) throws Exception {
        if (proxy == null) {
            throw new IllegalStateException("no proxy: proxy_forgets_group is for gRPC clients");
        }
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        while (proxy.knowsGroup(group)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the proxy still has the config of group " + group
                        + " after " + timeoutMs + " ms: is every broker of the cluster stopped?");
            }
            Thread.sleep(100);
        }
    }

    /** Changes a topic's read and write queues on a broker and registers the change at once. */
    private void route(String broker, String topic, int queues) {
        BrokerController controller = brokers.get(broker);
        if (controller == null) {
            throw new IllegalStateException("broker " + broker + " is not running");
        }
        controller.getTopicConfigManager().updateTopicConfig(new TopicConfig(topic, queues, queues));
        controller.registerBrokerAll(true, false, true);
        Trace.emit("b.route", "broker", broker, "topic", topic, "queues", queues);
    }

    /**
     * Deletes a broker's expired commit-log files now (RocketMQ's manual delete; with
     * {@code fileReservedTime} 0 every file but the one being written) and waits until each of
     * the topic's queues there starts above offset 0. On JDK 17 this is the only way a queue's
     * first message leaves "memory": the store's residency test always answers yes.
     */
    private void evict(String broker, String topic) throws Exception {
        BrokerController controller = brokers.get(broker);
        if (controller == null) {
            throw new IllegalStateException("broker " + broker + " is not running");
        }
        var store = controller.getMessageStore();
        int queues = controller.getTopicConfigManager().selectTopicConfig(topic).getReadQueueNums();
        long deadline = System.nanoTime() + 60_000_000_000L;
        store.executeDeleteFilesManually();
        for (int q = 0; q < queues; q++) {
            while (store.getMinOffsetInQueue(topic, q) <= 0) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("no commit-log file of " + broker
                            + " was deleted: produce more than one file's worth first");
                }
                Thread.sleep(100);
            }
            Trace.emit("b.store", "broker", broker, "topic", topic, "queue", broker + ":" + q,
                    "min", firstReadable(store, topic, q),
                    "max", store.getMaxOffsetInQueue(topic, q));
        }
    }

    /**
     * The first offset of a queue whose message the store still has: the consume queue keeps
     * entries for deleted commit-log files until its own cleaning runs, so its minimum may
     * still name messages no pull can return.
     */
    private static long firstReadable(org.apache.rocketmq.store.MessageStore store, String topic,
            int q) throws Exception {
        long offset = store.getMinOffsetInQueue(topic, q);
        long max = store.getMaxOffsetInQueue(topic, q);
        long minPhy = store.getMinPhyOffset();
        while (offset < max && store.getCommitLogOffsetInQueue(topic, q, offset) < minPhy) {
            offset++;
        }
        return offset;
    }

    /**
     * A stopped broker loses a table it persists under {@code config/}, and the table's backup, so
     * that it starts again without it: {@code consumerOffset.json} is its consumer offsets (what a
     * replaced disk without a backup loses, the commit log aside; {@code lose_disk}),
     * {@code consumerOrderInfo.json} its FIFO groups' order info, the last pop of each queue (what
     * a crash loses of a pop in the 10 s since the table's last write; {@code lose_order_info}).
     */
    private void lose(String broker, String table) throws Exception {
        if (brokers.containsKey(broker)) {
            throw new IllegalStateException("broker " + broker + " is running: stop it first");
        }
        File config = new File(new File(spec.getString("run_dir"), broker), "config");
        JSONArray lost = new JSONArray();
        for (String name : new String[] {table, table + ".bak"}) {
            if (Files.deleteIfExists(new File(config, name).toPath())) {
                lost.add("config/" + name);
            }
        }
        Trace.emit("b.disk", "broker", broker, "lost", lost);
    }

    private Relay relay(JSONObject args) {
        Relay relay = relays.get(args.getString("relay"));
        if (relay == null) {
            throw new IllegalArgumentException("no relay " + args.getString("relay"));
        }
        return relay;
    }

    private JSONObject topic(String name) {
        for (Object o : spec.getJSONArray("topics")) {
            if (((JSONObject) o).getString("name").equals(name)) {
                return (JSONObject) o;
            }
        }
        throw new IllegalArgumentException("no topic " + name);
    }

    /** Sends one message to each queue of the topic on the running brokers. */
    private void sendRound(JSONObject topic) throws Exception {
        String name = topic.getString("name");
        // The producer's own route poll is 30 s apart: a broker that joined
        // since must be in its route before a message can go there.
        producer.getDefaultMQProducerImpl().getMqClientFactory()
                .updateTopicRouteInfoFromNameServer(name);
        for (Object b : topic.getJSONArray("brokers")) {
            BrokerController broker = brokers.get((String) b);
            if (broker == null) {
                continue;
            }
            // The broker's queues now, which a route step may have changed.
            int queues = broker.getTopicConfigManager().selectTopicConfig(name).getWriteQueueNums();
            for (int q = 0; q < queues; q++) {
                MessageQueue mq = new MessageQueue(name, (String) b, q);
                Message msg = new Message(name, "m".getBytes(StandardCharsets.UTF_8));
                if (spec.getBooleanValue("fifo")) {
                    // One message group: a FIFO consumer takes a group's messages in order.
                    MessageAccessor.putProperty(msg, MessageConst.PROPERTY_SHARDING_KEY, "g");
                }
                SendResult sent = producer.send(msg, mq);
                Trace.emit("p.sent", "queue", b + ":" + q, "topic", name, "offset",
                        sent.getQueueOffset(), "msg", sent.getMsgId());
            }
        }
    }

    /**
     * Starts (or, at rate 0, stops) a steady load: {@code rate} rounds a second, each one
     * message to every queue, on a thread of its own while the script goes on. A round that
     * fails (a broker going away) is traced as {@code p.failed} and the load goes on.
     */
    private void stream(JSONObject args) throws Exception {
        int rate = args.getIntValue("rate");
        if (stream != null) {
            stream.cancel(false);
            stream = null;
            // One thread: once this no-op has run, no round is under way, so the
            // acknowledgement follows the last message sent.
            streamer.submit(() -> { }).get();
        }
        if (rate <= 0) {
            return;
        }
        JSONObject topic = topic(args.getString("topic"));
        stream = streamer.scheduleAtFixedRate(() -> {
            try {
                sendRound(topic);
            } catch (Exception e) {
                Trace.emit("p.failed", "topic", topic.getString("name"), "reason", String.valueOf(e));
            }
        }, 0, 1_000_000_000L / rate, TimeUnit.NANOSECONDS);
    }

    /** Each running broker's member list for the group, one entry a channel. */
    private void snapshot() {
        for (Map.Entry<String, BrokerController> b : brokers.entrySet()) {
            var info = b.getValue().getConsumerManager().getConsumerGroupInfo(group);
            JSONArray members = new JSONArray();
            if (info != null) {
                members.addAll(info.getAllClientId());
            }
            Trace.emit("snap", "broker", b.getKey(), "members", members);
        }
    }

    private void shutdown() {
        streamer.shutdownNow();
        if (proxy != null) {
            try {
                proxy.shutdown();
            } catch (Exception e) {
                e.printStackTrace();
            }
        }
        producer.shutdown();
        for (String name : new ArrayList<>(brokers.keySet())) {
            stopBroker(name);
        }
        for (Map.Entry<String, BrokerController> slave : slaves.entrySet()) {
            if (!failedOver.contains(slave.getKey())) {
                slave.getValue().shutdown();
            }
        }
        for (NamesrvController ns : nameServers.values()) {
            ns.shutdown();
        }
        for (Relay relay : relays.values()) {
            relay.cut();
        }
    }
}
