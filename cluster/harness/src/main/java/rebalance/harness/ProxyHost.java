package rebalance.harness;

import com.alibaba.fastjson2.JSON;
import com.alibaba.fastjson2.JSONObject;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.common.utils.AbstractStartAndShutdown;
import org.apache.rocketmq.proxy.ProxyStartup;
import org.apache.rocketmq.proxy.common.ProxyContext;
import org.apache.rocketmq.proxy.config.Configuration;
import org.apache.rocketmq.proxy.config.ConfigurationManager;
import org.apache.rocketmq.proxy.config.ProxyConfig;
import org.apache.rocketmq.proxy.grpc.GrpcServerBuilder;
import org.apache.rocketmq.proxy.grpc.v2.GrpcMessagingApplication;
import org.apache.rocketmq.proxy.metrics.ProxyMetricsManager;
import org.apache.rocketmq.proxy.processor.DefaultMessagingProcessor;

/**
 * RocketMQ's proxy in the cluster JVM, in cluster mode: it serves the gRPC clients of a FIFO
 * group, or of a concurrent POP group, and reaches the name servers and brokers over remoting, as a proxy deployed beside a
 * cluster does. It is put together as {@code ProxyStartup} puts it together, from a
 * configuration file the harness writes (the proxy reads its settings only from a file), with
 * the gRPC server alone: its remoting server is for remoting clients, which talk to the brokers
 * here. The proxy sends no heartbeat of a gRPC client to the brokers: it keeps its clients
 * itself, and pops and acknowledges for them on its own connections.
 */
final class ProxyHost extends AbstractStartAndShutdown {
    private DefaultMessagingProcessor processor;

    private ProxyHost() {}

    /**
     * Whether the proxy holds a config of {@code group}: what a gRPC client's receive reads
     * ({@code MetadataService.getSubscriptionGroupConfig}, the cache of {@code
     * ClusterMetadataService}), and as a receive does, a read once the cache's refresh interval
     * has passed starts the cache's reload of it.
     */
    boolean knowsGroup(String group) {
        return processor.getMetadataService()
                .getSubscriptionGroupConfig(ProxyContext.createForInner(ProxyHost.class), group) != null;
    }

    /**
     * Starts the proxy of {@code spec} ({@code grpc_port}, {@code remoting_port}, and
     * {@code config}: settings of {@code ProxyConfig} by name, the script's timers) for the
     * cluster named {@code cluster}, whose first name server is {@code nameServer}; its files in
     * {@code dir}.
     */
    static ProxyHost start(JSONObject spec, String cluster, String nameServer, File dir)
            throws Exception {
        Map<String, Object> config = new LinkedHashMap<>();
        config.put("rocketMQClusterName", cluster);
        config.put("proxyName", "harness-proxy");
        config.put("proxyMode", "cluster");
        config.put("namesrvAddr", nameServer);
        config.put("grpcServerPort", spec.getIntValue("grpc_port"));
        // Not served, but part of the proxy's id.
        config.put("remotingListenPort", spec.getIntValue("remoting_port"));
        config.put("grpcShutdownTimeSeconds", 1);
        config.put("enablePrintJstack", false);
        JSONObject timers = spec.getJSONObject("config");
        if (timers != null) {
            config.putAll(timers);
        }
        dir.mkdirs();
        File file = new File(dir, "rmq-proxy.json");
        Files.writeString(file.toPath(), JSON.toJSONString(config), StandardCharsets.UTF_8);
        System.setProperty(Configuration.CONFIG_PATH_PROPERTY, file.getAbsolutePath());
        ConfigurationManager.initEnv();
        ConfigurationManager.intConfig();
        ProxyConfig proxyConfig = ConfigurationManager.getProxyConfig();
        ProxyStartup.initThreadPoolMonitor();

        ProxyHost proxy = new ProxyHost();
        ThreadPoolExecutor executor = ProxyStartup.createServerExecutor();
        proxy.appendShutdown(executor::shutdown);
        DefaultMessagingProcessor processor = DefaultMessagingProcessor.createForClusterMode();
        proxy.processor = processor;
        proxy.appendStartAndShutdown(ProxyMetricsManager.initClusterMode(proxyConfig));
        proxy.appendStartAndShutdown(processor);
        GrpcMessagingApplication application = GrpcMessagingApplication.create(processor);
        proxy.appendStartAndShutdown(application);
        proxy.appendStartAndShutdown(GrpcServerBuilder
                .newBuilder(executor, proxyConfig.getGrpcServerPort())
                .addService(application)
                .configInterceptor()
                .shutdownTime(proxyConfig.getGrpcShutdownTimeSeconds(), TimeUnit.SECONDS)
                .build());
        proxy.start();
        return proxy;
    }
}
