package local.graphrag.neo4j;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.QueryExecutionException;
import org.neo4j.io.ByteUnit;

/**
 * Runs an embedded Neo4j community DBMS that serves Bolt on the loopback interface, with the
 * APOC core procedures loaded from the plugin directory. Meant for local development and tests.
 *
 * <p>Options come from {@code --name value} arguments first, then environment variables:
 * {@code --home} / NEO4J_HOME_DIR, {@code --port} / NEO4J_BOLT_PORT, {@code --plugins} /
 * NEO4J_PLUGIN_DIR, {@code --pagecache} / NEO4J_PAGECACHE, {@code --config} /
 * NEO4J_CONFIG_FILE, and NEO4J_PASSWORD (environment only, so the password never shows in the
 * process list).
 *
 * <p>The config file ({@code deploy/neo4j/neo4j.conf} by default) holds the settings the
 * production stack shares with this server, such as which procedures may load.
 */
public final class Launcher {

    private static final String BOLT_HOST = "127.0.0.1";
    private static final int DEFAULT_BOLT_PORT = 7697;
    private static final String DEFAULT_PASSWORD = "graphrag-local";
    private static final String DEFAULT_PAGECACHE = "256m";
    private static final String ADMIN_USER = "neo4j";
    /**
     * Written under the home once the password is set, removed on shutdown: lets a health
     * check wait before trying Bolt credentials, since failed logins lock the user for a while.
     */
    private static final String READY_FILE_NAME = "neo4j.ready";
    private static final String SAME_PASSWORD_REFUSAL = "Old password and new password cannot be the same";

    private Launcher() {
    }

    /**
     * Starts the DBMS, sets the admin password, then blocks until the JVM is asked to stop.
     *
     * @param args {@code --name value} pairs overriding the environment
     * @throws Exception when the DBMS cannot start
     */
    public static void main(String[] args) throws Exception {
        Options options = Options.parse(args, System.getenv(), defaultLayout());
        Files.createDirectories(options.home());
        Path readyFile = options.home().resolve(READY_FILE_NAME);
        Files.deleteIfExists(readyFile);
        DatabaseManagementService dbms;
        try {
            dbms = build(options);
        } catch (RuntimeException e) {
            // A half-started DBMS can leave non-daemon threads behind: make the failure final.
            e.printStackTrace();
            System.exit(1);
            return;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            log("shutting down");
            deleteQuietly(readyFile);
            dbms.shutdown();
            log("stopped");
            stopped.countDown();
        }, "neo4j-local-shutdown"));
        try {
            setAdminPassword(dbms.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME), options.password());
        } catch (RuntimeException e) {
            // Neo4j's own threads would keep the JVM alive: exit, and let the hook shut down.
            e.printStackTrace();
            System.exit(1);
        }
        Files.writeString(readyFile, ProcessHandle.current().pid() + "\n");
        log("ready: bolt://" + BOLT_HOST + ":" + options.port() + " home=" + options.home());
        stopped.await();
    }

    private static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            log("could not delete " + file + ": " + e.getMessage());
        }
    }

    private static DatabaseManagementService build(Options options) {
        return new DatabaseManagementServiceBuilder(options.home())
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress(BOLT_HOST, options.port()))
                .setConfig(BoltConnector.advertised_address, new SocketAddress(BOLT_HOST, options.port()))
                .setConfig(HttpConnector.enabled, false)
                .setConfig(HttpsConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.auth_enabled, true)
                .setConfig(GraphDatabaseSettings.plugin_dir, options.plugins())
                .loadPropertiesFromFile(options.config())
                .setConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.parse(options.pagecache()))
                // A dev store need not reserve 256 MiB of transaction log per database up front.
                .setConfig(GraphDatabaseSettings.preallocate_logical_logs, false)
                .build();
    }

    /**
     * Embedded transactions run without authentication, so the system database accepts the
     * password change directly; the password then matches NEO4J_PASSWORD on every start.
     */
    private static void setAdminPassword(GraphDatabaseService system, String password) {
        try {
            system.executeTransactionally(
                    "ALTER USER " + ADMIN_USER + " SET PLAINTEXT PASSWORD $password CHANGE NOT REQUIRED",
                    Map.of("password", password));
            log("password of user '" + ADMIN_USER + "' set from NEO4J_PASSWORD");
        } catch (QueryExecutionException e) {
            // Neo4j refuses to "change" a password to the one already stored: nothing to do then.
            if (e.getMessage() == null || !e.getMessage().contains(SAME_PASSWORD_REFUSAL)) {
                throw e;
            }
            log("password of user '" + ADMIN_USER + "' already matches NEO4J_PASSWORD");
        }
    }

    /**
     * Home, plugin folder and config file relative to the launcher jar:
     * {@code <repo>/deploy/neo4j/target}.
     */
    private static Layout defaultLayout() throws URISyntaxException {
        Path jarDir = Path.of(Launcher.class.getProtectionDomain().getCodeSource().getLocation().toURI())
                .toAbsolutePath().getParent();
        Path repo = jarDir.getParent().getParent().getParent();
        return new Layout(repo.resolve("data").resolve("neo4j"), jarDir.resolve("plugins"),
                jarDir.getParent().resolve("neo4j.conf"));
    }

    private static void log(String message) {
        System.out.println(Instant.now() + " neo4j-local " + message);
        System.out.flush();
    }

    private record Layout(Path home, Path plugins, Path config) {
    }

    private record Options(Path home, int port, Path plugins, String pagecache, Path config,
                           String password) {

        static Options parse(String[] args, Map<String, String> env, Layout layout) {
            Map<String, String> given = pairs(args);
            String home = pick(given, "--home", env, "NEO4J_HOME_DIR", layout.home().toString());
            String port = pick(given, "--port", env, "NEO4J_BOLT_PORT", Integer.toString(DEFAULT_BOLT_PORT));
            String plugins = pick(given, "--plugins", env, "NEO4J_PLUGIN_DIR", layout.plugins().toString());
            String pagecache = pick(given, "--pagecache", env, "NEO4J_PAGECACHE", DEFAULT_PAGECACHE);
            String config = pick(given, "--config", env, "NEO4J_CONFIG_FILE", layout.config().toString());
            String password = env.getOrDefault("NEO4J_PASSWORD", DEFAULT_PASSWORD);
            if (password.isEmpty()) {
                throw new IllegalArgumentException("NEO4J_PASSWORD must not be empty");
            }
            return new Options(Path.of(home).toAbsolutePath(), Integer.parseInt(port),
                    Path.of(plugins).toAbsolutePath(), pagecache, Path.of(config).toAbsolutePath(),
                    password);
        }

        private static Map<String, String> pairs(String[] args) {
            if (args.length % 2 != 0) {
                throw new IllegalArgumentException("arguments must be --name value pairs");
            }
            Map<String, String> result = new java.util.HashMap<>();
            for (int i = 0; i < args.length; i += 2) {
                result.put(args[i], args[i + 1]);
            }
            return result;
        }

        private static String pick(Map<String, String> given, String flag, Map<String, String> env,
                                   String variable, String fallback) {
            String value = given.get(flag);
            if (value == null || value.isEmpty()) {
                value = env.get(variable);
            }
            return value == null || value.isEmpty() ? fallback : value;
        }
    }
}
