package sgam.neo4j;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.ConnectorPortRegister;
import org.neo4j.configuration.connectors.ConnectorType;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.Transaction;
import org.neo4j.internal.helpers.HostnamePort;
import org.neo4j.kernel.internal.GraphDatabaseAPI;

/**
 * Embedded Neo4j Community server with the Bolt connector on loopback, auth disabled.
 *
 * <pre>
 * java ... sgam.neo4j.EmbeddedNeo4j --home DIR [--port N] [--uri-file FILE] [--page-cache-mb N]
 * </pre>
 *
 * --port 0 (the default) lets the OS pick a free port; the port actually bound is read back
 * from Neo4j's connector port register. Once the server accepts Bolt connections, the bolt URI
 * is written (atomically) to --uri-file and printed on stdout. SIGTERM shuts down cleanly.
 */
public final class EmbeddedNeo4j {

    private static final String HOST = "127.0.0.1";

    private EmbeddedNeo4j() {}

    public static void main(String[] args) throws Exception {
        Path home = null;
        int port = 0;
        Path uriFile = null;
        long pageCacheMb = 256;

        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--home":
                case "--data-dir":
                    home = Path.of(need(args, ++i, a));
                    break;
                case "--port":
                    port = Integer.parseInt(need(args, ++i, a));
                    break;
                case "--uri-file":
                    uriFile = Path.of(need(args, ++i, a));
                    break;
                case "--page-cache-mb":
                    pageCacheMb = Long.parseLong(need(args, ++i, a));
                    break;
                case "-h":
                case "--help":
                    System.out.println("usage: EmbeddedNeo4j --home DIR [--port N (0=free port)]"
                            + " [--uri-file FILE] [--page-cache-mb N]");
                    return;
                default:
                    System.err.println("unknown argument: " + a);
                    System.exit(2);
            }
        }
        if (home == null) {
            home = Files.createTempDirectory("sgam-neo4j-");
        }
        Files.createDirectories(home);
        home = home.toAbsolutePath();

        final long mib = 1024L * 1024L;
        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                .setConfig(GraphDatabaseSettings.auth_enabled, false)
                .setConfig(GraphDatabaseSettings.default_listen_address, new SocketAddress(HOST))
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress(HOST, port))
                .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                .setConfig(HttpConnector.enabled, false)
                .setConfig(HttpsConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.pagecache_memory, pageCacheMb * mib)
                .setConfig(GraphDatabaseSettings.memory_transaction_global_max_size, 512 * mib)
                .setConfig(GraphDatabaseSettings.memory_transaction_max_size, 256 * mib)
                .setConfig(GraphDatabaseSettings.preallocate_logical_logs, false)
                .setConfig(GraphDatabaseSettings.logical_log_rotation_threshold, 16 * mib)
                .setConfig(GraphDatabaseSettings.keep_logical_logs, "false")
                .setConfig(GraphDatabaseSettings.udc_enabled, false)
                .build();

        final Path uriFileFinal = uriFile;
        final CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                if (uriFileFinal != null) {
                    Files.deleteIfExists(uriFileFinal);
                }
            } catch (IOException ignored) {
                // best effort
            }
            try {
                dbms.shutdown();
            } catch (Throwable t) {
                System.err.println("neo4j shutdown failed: " + t);
            }
            stopped.countDown();
        }, "sgam-neo4j-shutdown"));

        GraphDatabaseService db = dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (!db.isAvailable(1000)) {
            if (System.nanoTime() > deadline) {
                System.err.println("default database did not become available");
                System.exit(1);
            }
        }
        try (Transaction tx = db.beginTx()) {
            tx.execute("RETURN 1").close();
            tx.commit();
        }

        ConnectorPortRegister ports = ((GraphDatabaseAPI) db).getDependencyResolver()
                .resolveDependency(ConnectorPortRegister.class);
        HostnamePort bound = ports.getLocalAddress(ConnectorType.BOLT);
        if (bound == null) {
            System.err.println("bolt connector is not listening");
            System.exit(1);
        }
        int boundPort = bound.getPort();
        waitForPort(boundPort, deadline);

        String uri = "bolt://" + HOST + ":" + boundPort;
        if (uriFile != null) {
            Path parent = uriFile.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            Path tmp = uriFile.resolveSibling(uriFile.getFileName() + ".tmp");
            Files.writeString(tmp, uri + "\n", StandardCharsets.UTF_8);
            Files.move(tmp, uriFile, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        }
        System.out.println(uri);
        System.out.flush();

        // Block until the JVM is asked to exit (SIGTERM/SIGINT run the shutdown hook).
        while (!stopped.await(1, TimeUnit.HOURS)) {
            // keep waiting
        }
    }

    private static void waitForPort(int port, long deadlineNanos) throws InterruptedException {
        while (true) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(HOST, port), 1000);
                return;
            } catch (IOException e) {
                if (System.nanoTime() > deadlineNanos) {
                    System.err.println("bolt port " + port + " does not accept connections: " + e);
                    System.exit(1);
                }
                Thread.sleep(100);
            }
        }
    }

    private static String need(String[] args, int i, String flag) {
        if (i >= args.length) {
            System.err.println("missing value for " + flag);
            System.exit(2);
        }
        return args[i];
    }
}
