package rebalance.harness;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A loopback TCP relay between a broker and a name server: cutting it closes both sides of every
 * connection and refuses new ones (the name server sees the broker's connection close and drops
 * it at once); healing it accepts again.
 */
final class Relay {
    private final String name;
    private final int port;
    private final int targetPort;
    private final List<Socket> open = new CopyOnWriteArrayList<>();
    private volatile boolean cut;
    private ServerSocket server;

    Relay(String name, int port, int targetPort) {
        this.name = name;
        this.port = port;
        this.targetPort = targetPort;
    }

    void start() throws IOException {
        server = new ServerSocket(port, 50, InetAddress.getLoopbackAddress());
        Thread accept = new Thread(this::acceptLoop, "relay-" + name);
        accept.setDaemon(true);
        accept.start();
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket in = server.accept();
                if (cut) {
                    in.close();
                    continue;
                }
                Socket out = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                open.add(in);
                open.add(out);
                pipe(in, out);
                pipe(out, in);
            } catch (IOException e) {
                if (server.isClosed()) {
                    return;
                }
            }
        }
    }

    private void pipe(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[8192];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    out.write(buf, 0, n);
                }
            } catch (IOException ignored) {
                // The other side closed, or the relay was cut.
            } finally {
                close(from);
                close(to);
            }
        }, "relay-" + name + "-pipe");
        t.setDaemon(true);
        t.start();
    }

    private void close(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // Already closed.
        }
        open.remove(s);
    }

    void cut() {
        cut = true;
        for (Socket s : open) {
            close(s);
        }
        Trace.emit("relay", "relay", name, "state", "cut");
    }

    void heal() {
        cut = false;
        Trace.emit("relay", "relay", name, "state", "healed");
    }
}
