package rebalance.harness;

import java.util.List;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;

/** A name server's observation point: broker registrations and route queries. */
final class NameServerHook implements RPCHook {
    private static final List<Integer> TRACED = List.of(RequestCode.REGISTER_BROKER,
            RequestCode.UNREGISTER_BROKER);
    private final String name;

    NameServerHook(String name) {
        this.name = name;
    }

    @Override
    public void doBeforeRequest(String remoteAddr, RemotingCommand request) {
        if (TRACED.contains(request.getCode())) {
            Trace.emit("ns.req", "ns", name, "code", request.getCode(), "addr", remoteAddr,
                    "broker", request.getExtFields() == null ? null
                            : request.getExtFields().get("brokerName"));
        }
    }

    @Override
    public void doAfterResponse(String remoteAddr, RemotingCommand request, RemotingCommand response) {}
}
