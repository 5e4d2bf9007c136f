package org.loadcontrol.cluster;

import static org.codelibs.opensearch.runner.OpenSearchRunner.newConfigs;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.codelibs.opensearch.runner.OpenSearchRunner;
import org.opensearch.Version;
import org.opensearch.action.admin.cluster.health.ClusterHealthResponse;
import org.opensearch.common.unit.TimeValue;
import org.opensearch.node.Node;

/**
 * A real OpenSearch cluster of N nodes in this JVM, on 127.0.0.1 only.
 *
 * <p>Usage: {@code Cluster DIR [NODES]}. Node data lives under {@code DIR}. When every node
 * has joined and the cluster is green or yellow, it writes {@code DIR/url} (the first node),
 * {@code DIR/urls} (every node, one a line) and {@code DIR/version}, and prints the URL.
 *
 * <p>{@code Cluster DIR 1 --secure} starts one node with the security plugin instead: TLS
 * on HTTP and transport with the certificates in {@code DIR/certs} ({@code ca.pem},
 * {@code node.pem}, {@code node-key.pem}, made by {@code cluster.sh}), and basic auth for
 * two users whose password is in {@code DIR/password}: {@code loadcontrol}, an admin, and
 * {@code reader}, who has no role and so no permission to read node stats. The plugin's jars
 * must be on the classpath and its config directory in the system property
 * {@code security.config}. It writes {@code DIR/url} ({@code https://...}) once the node
 * has started; the security index is ready when an authenticated request answers 200.
 *
 * <p>The tests steer it through files: a file {@code DIR/control/COMMAND} is carried out
 * and replaced by {@code DIR/done/COMMAND}. Commands: {@code stop-node-N},
 * {@code start-node-N}, {@code stop-all}, {@code start-all} (N counts from 1). SIGTERM
 * closes every node and exits.
 */
public final class Cluster {
    private static final String CLUSTER_NAME = "load-control-test";

    private Cluster() {}

    public static void main(final String[] args) throws Exception {
        if (args.length < 1 || args.length > 3 || (args.length == 3 && !args[2].equals("--secure"))) {
            System.err.println("usage: Cluster DIR [NODES [--secure]]");
            System.exit(2);
        }
        final Path dir = Paths.get(args[0]).toAbsolutePath();
        final int nodes = args.length >= 2 ? Integer.parseInt(args[1]) : 3;
        if (args.length == 3) {
            secure(dir);
            return;
        }
        final int[] http = freePorts(nodes);
        final int[] transport = freePorts(nodes);
        final List<String> seeds = new ArrayList<>();
        for (final int port : transport) {
            seeds.add("127.0.0.1:" + port);
        }

        Files.createDirectories(dir.resolve("control"));
        Files.createDirectories(dir.resolve("done"));

        final OpenSearchRunner runner = new OpenSearchRunner();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                Files.deleteIfExists(dir.resolve("url"));
                runner.close();
            } catch (final IOException e) {
                System.err.println("closing: " + e);
            }
        }));
        runner.onBuild((number, settings) -> {
            final int i = number - 1;
            settings.put("network.host", "127.0.0.1");
            settings.put("http.port", http[i]);
            settings.put("transport.port", transport[i]);
            settings.putList("discovery.seed_hosts", seeds);
            // Node 1 bootstraps the cluster alone; the others join it.
            settings.putList("cluster.initial_cluster_manager_nodes", "Node 1");
            // Small test machines: no disk watermarks, no memory lock, no ML-sized pools.
            settings.put("cluster.routing.allocation.disk.threshold_enabled", false);
            settings.put("bootstrap.memory_lock", false);
            settings.put("monitor.os.refresh_interval", "1s");
        }).build(newConfigs().clusterName(CLUSTER_NAME).numOfNode(nodes)
                .basePath(dir.resolve("nodes").toString()));

        awaitNodes(runner, nodes);
        final String url = "http://127.0.0.1:" + http[0];
        final StringBuilder urls = new StringBuilder();
        for (final int port : http) {
            urls.append("http://127.0.0.1:").append(port).append('\n');
        }
        write(dir.resolve("urls"), urls.toString());
        write(dir.resolve("version"), Version.CURRENT.toString() + "\n");
        write(dir.resolve("url"), url + "\n");
        System.out.println("cluster ready: " + url + " (" + nodes + " nodes, OpenSearch "
                + Version.CURRENT + ")");
        System.out.flush();

        while (true) {
            try (Stream<Path> commands = Files.list(dir.resolve("control"))) {
                for (final Path command : (Iterable<Path>) commands::iterator) {
                    run(runner, nodes, command.getFileName().toString());
                    Files.move(command, dir.resolve("done").resolve(command.getFileName()),
                            StandardCopyOption.REPLACE_EXISTING);
                }
            }
            Thread.sleep(100);
        }
    }

    /** One node with the security plugin: TLS everywhere, basic auth, one user. */
    private static void secure(final Path dir) throws Exception {
        final int[] ports = freePorts(2);
        final int http = ports[0];
        final int transport = ports[1];
        final Path config = dir.resolve("nodes").resolve("node_1").resolve("config");
        final Path security = config.resolve("opensearch-security");
        Files.createDirectories(security);
        for (final String cert : new String[] {"ca.pem", "node.pem", "node-key.pem"}) {
            Files.copy(dir.resolve("certs").resolve(cert), config.resolve(cert),
                    StandardCopyOption.REPLACE_EXISTING);
        }
        final Path defaults = Paths.get(System.getProperty("security.config", ""));
        try (Stream<Path> files = Files.list(defaults)) {
            for (final Path file : (Iterable<Path>) files::iterator) {
                if (file.getFileName().toString().endsWith(".yml")) {
                    Files.copy(file, security.resolve(file.getFileName()),
                            StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
        final String password = Files.readString(dir.resolve("password")).trim();
        final String hash = (String) Class.forName("org.opensearch.security.tools.Hasher")
                .getMethod("hash", char[].class).invoke(null, (Object) password.toCharArray());
        write(security.resolve("internal_users.yml"), "---\n_meta:\n  type: \"internalusers\"\n"
                + "  config_version: 2\nloadcontrol:\n  hash: \"" + hash + "\"\n"
                + "  reserved: false\n  backend_roles:\n  - \"admin\"\n"
                + "  description: \"the load-control tests\"\n"
                + "reader:\n  hash: \"" + hash + "\"\n  reserved: false\n  backend_roles: []\n"
                + "  description: \"a user without permissions (the 403 fixtures)\"\n");

        final OpenSearchRunner runner = new OpenSearchRunner();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                Files.deleteIfExists(dir.resolve("url"));
                runner.close();
            } catch (final IOException e) {
                System.err.println("closing: " + e);
            }
        }));
        runner.onBuild((number, settings) -> {
            settings.put("network.host", "127.0.0.1");
            settings.put("http.port", http);
            settings.put("transport.port", transport);
            settings.put("discovery.type", "single-node");
            settings.put("cluster.routing.allocation.disk.threshold_enabled", false);
            settings.put("plugins.security.ssl.transport.pemcert_filepath", "node.pem");
            settings.put("plugins.security.ssl.transport.pemkey_filepath", "node-key.pem");
            settings.put("plugins.security.ssl.transport.pemtrustedcas_filepath", "ca.pem");
            settings.put("plugins.security.ssl.transport.enforce_hostname_verification", false);
            settings.put("plugins.security.ssl.http.enabled", true);
            settings.put("plugins.security.ssl.http.pemcert_filepath", "node.pem");
            settings.put("plugins.security.ssl.http.pemkey_filepath", "node-key.pem");
            settings.put("plugins.security.ssl.http.pemtrustedcas_filepath", "ca.pem");
            settings.put("plugins.security.allow_default_init_securityindex", true);
            settings.putList("plugins.security.nodes_dn", "CN=node.load-control.test");
            settings.putList("plugins.security.authcz.admin_dn", "CN=admin.load-control.test");
            settings.put("plugins.security.audit.type", "noop");
        }).build(newConfigs().clusterName(CLUSTER_NAME + "-secure").numOfNode(1)
                .basePath(dir.resolve("nodes").toString())
                .pluginTypes("org.opensearch.security.OpenSearchSecurityPlugin"));

        final String url = "https://127.0.0.1:" + http;
        write(dir.resolve("version"), Version.CURRENT.toString() + "\n");
        write(dir.resolve("url"), url + "\n");
        System.out.println("secured node started: " + url);
        System.out.flush();
        while (true) {
            Thread.sleep(1000);
        }
    }

    private static void run(final OpenSearchRunner runner, final int nodes, final String command)
            throws Exception {
        System.out.println("command: " + command);
        if (command.startsWith("stop-node-")) {
            stop(runner.getNode(Integer.parseInt(command.substring(10)) - 1));
        } else if (command.startsWith("start-node-")) {
            runner.startNode(Integer.parseInt(command.substring(11)) - 1);
            awaitNodes(runner, runner.getNodeSize());
        } else if (command.equals("stop-all")) {
            for (int i = nodes - 1; i >= 0; i--) {
                stop(runner.getNode(i));
            }
        } else if (command.equals("start-all")) {
            for (int i = 0; i < nodes; i++) {
                runner.startNode(i);
            }
            awaitNodes(runner, nodes);
        } else {
            System.err.println("unknown command: " + command);
        }
        System.out.println("done: " + command);
        System.out.flush();
    }

    private static void stop(final Node node) throws IOException, InterruptedException {
        if (node != null && !node.isClosed()) {
            node.close();
            node.awaitClose(30, TimeUnit.SECONDS);
        }
    }

    /** Waits until `nodes` nodes are in the cluster and it is at least yellow. */
    private static void awaitNodes(final OpenSearchRunner runner, final int nodes) {
        for (int attempt = 0; attempt < 120; attempt++) {
            try {
                final ClusterHealthResponse health = runner.client().admin().cluster()
                        .prepareHealth().setWaitForNodes(">=" + nodes).setWaitForYellowStatus()
                        .setTimeout(TimeValue.timeValueSeconds(1)).get();
                if (!health.isTimedOut() && health.getNumberOfNodes() >= nodes) {
                    return;
                }
            } catch (final RuntimeException e) {
                // A node that is still starting: try again.
            }
            try {
                Thread.sleep(500);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        throw new IllegalStateException(nodes + " nodes never formed a cluster");
    }

    /**
     * {@code n} distinct ports free on 127.0.0.1 now, drawn below the kernel's ephemeral range
     * (net.ipv4.ip_local_port_range): a port from that range can be taken, between this check
     * and the node's bind, by any outgoing connection on the machine, the other nodes' among
     * them. Where the range leaves no room below it, the kernel picks (port 0).
     */
    private static int[] freePorts(final int n) throws IOException {
        final int low = ephemeralLow();
        final int from = 10000;
        final int[] ports = new int[n];
        final java.util.Random random = new java.util.Random();
        final List<ServerSocket> held = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                ServerSocket socket = null;
                for (int attempt = 0; socket == null && low - from > 1000 && attempt < 200; attempt++) {
                    final int port = from + random.nextInt(low - from);
                    try {
                        socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress());
                    } catch (final IOException taken) {
                        // In use: draw again.
                    }
                }
                if (socket == null) {
                    socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                }
                held.add(socket);
                ports[i] = socket.getLocalPort();
            }
        } finally {
            for (final ServerSocket socket : held) {
                socket.close();
            }
        }
        return ports;
    }

    /**
     * The first port of the kernel's ephemeral range; 32768 (Linux's default) if unread. Read
     * line by line: procfs reports a size of 0, and {@code Files.readString} reads one byte.
     */
    private static int ephemeralLow() {
        try (java.io.BufferedReader reader = Files.newBufferedReader(
                Paths.get("/proc/sys/net/ipv4/ip_local_port_range"))) {
            return Integer.parseInt(reader.readLine().trim().split("\\s+")[0]);
        } catch (final IOException | RuntimeException e) {
            return 32768;
        }
    }

    private static void write(final Path path, final String text) throws IOException {
        final Path tmp = path.resolveSibling(path.getFileName() + ".tmp");
        Files.write(tmp, text.getBytes(StandardCharsets.UTF_8));
        Files.move(tmp, path, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}
