package com.github.connectinit.provider;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.common.config.ConfigData;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.provider.ConfigProvider;
import org.apache.kafka.common.utils.Exit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Holds a Kafka Connect worker just before it joins its group until
 * connect-init's startup lock gives it its turn.
 *
 * <p>Connect resolves {@code ${provider:key}} references in the worker
 * configuration while it constructs its {@code DistributedConfig}
 * ({@code AbstractConnectCli.startConnect}: {@code new Plugins(...)}, then
 * {@code createConfig(...)}), that is after the plugin scan and before the
 * herder reads the internal topics and joins the group. {@code connect-init
 * run} wires the worker configuration so that one property refers to
 * {@code ${<name>:startup.lock}}; {@link #get(String, Set)} then runs
 * {@code connect-init lock acquire --watch-stdin} and returns once it exits 0.
 *
 * <p>Withdrawal: a SIGTERM to the worker runs a shutdown hook that sends the
 * child SIGTERM (it withdraws its request and exits); if the worker dies
 * outright (SIGKILL), the child's stdin, a pipe from this JVM, reaches EOF
 * and the child withdraws. If the child fails, the worker exits with the
 * child's exit code, as connect-init would have before exec'ing it.
 *
 * <p>Parameters ({@code config.providers.<name>.param.*}): {@code command},
 * the connect-init binary; {@code env.a.b}, passed to the child as
 * {@code CONNECT_INIT_A_B}. Every other instance Connect creates (the
 * REST server's and the worker's config transformers) only configures and
 * closes: nothing happens until get() is asked for {@value #KEY}.
 */
public final class StartupLockConfigProvider implements ConfigProvider {
    /** The one key get() answers; a reference is {@code ${<name>:startup.lock}}. */
    public static final String KEY = "startup.lock";
    /** The value every reference resolves to. */
    public static final String GRANTED = "granted";
    /** Parameter naming the connect-init binary. */
    public static final String COMMAND = "command";
    /** Prefix of parameters passed to the child as CONNECT_INIT_* variables. */
    public static final String ENV_PREFIX = "env.";

    private static final Logger log = LoggerFactory.getLogger(StartupLockConfigProvider.class);
    /** How long the shutdown hook waits for the child to withdraw. */
    private static final long WITHDRAW_SECONDS = 15;

    /** The lock is taken once per JVM, whichever instance asks first. */
    private static final Object TURN = new Object();
    private static boolean granted;

    private final Map<String, String> params = new HashMap<>();

    @Override
    public void configure(Map<String, ?> configs) {
        for (Map.Entry<String, ?> e : configs.entrySet()) {
            if (e.getValue() != null) {
                params.put(e.getKey(), e.getValue().toString());
            }
        }
    }

    @Override
    public ConfigData get(String path) {
        return new ConfigData(Collections.emptyMap());
    }

    @Override
    public ConfigData get(String path, Set<String> keys) {
        if (keys == null || !keys.contains(KEY)) {
            return new ConfigData(Collections.emptyMap());
        }
        synchronized (TURN) {
            if (!granted) {
                acquire();
                granted = true;
            }
        }
        return new ConfigData(Collections.singletonMap(KEY, GRANTED));
    }

    @Override
    public void close() {
    }

    private void acquire() {
        String command = params.get(COMMAND);
        if (command == null || command.isEmpty()) {
            throw new ConfigException("the connect-init config provider has no '" + COMMAND + "' parameter; "
                    + "let connect-init run wire the worker configuration, or set CONNECT_INIT_LOCK_MODE=exec");
        }
        List<String> argv = new ArrayList<>(List.of(command, "lock", "acquire", "--watch-stdin"));
        ProcessBuilder pb = new ProcessBuilder(argv);
        for (Map.Entry<String, String> e : params.entrySet()) {
            if (e.getKey().startsWith(ENV_PREFIX) && e.getKey().length() > ENV_PREFIX.length()) {
                String name = "CONNECT_INIT_" + e.getKey().substring(ENV_PREFIX.length()).toUpperCase(Locale.ROOT).replace('.', '_');
                pb.environment().put(name, e.getValue());
            }
        }
        pb.redirectOutput(ProcessBuilder.Redirect.INHERIT);
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        log.info("Waiting for this worker's turn to join the group (connect-init startup lock): {}", String.join(" ", argv));
        long start = System.nanoTime();
        Process child;
        try {
            child = pb.start();
        } catch (IOException e) {
            throw new ConfigException("cannot run " + command + " lock acquire: " + e.getMessage()
                    + "; install connect-init there, or set CONNECT_INIT_LOCK_MODE=exec");
        }
        Thread hook = new Thread(() -> withdraw(child), "connect-init-startup-lock-withdraw");
        Runtime.getRuntime().addShutdownHook(hook);
        int code;
        try {
            code = child.waitFor();
        } catch (InterruptedException e) {
            withdraw(child);
            Thread.currentThread().interrupt();
            throw new ConfigException("interrupted while waiting for the connect-init startup lock");
        } finally {
            try {
                child.getOutputStream().close();
            } catch (IOException ignored) {
                // the child has exited; nothing to tell it
            }
        }
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // The hook withdrew the request; the JVM is exiting.
        }
        if (code != 0) {
            log.error("connect-init lock acquire exited with {}; stopping the worker before it joins the group", code);
            Exit.exit(code);
            throw new ConfigException("connect-init lock acquire exited with " + code);
        }
        log.info("This worker's turn to join the group came after {} ms", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
    }

    /** Sends the child SIGTERM, so that it withdraws its request, and waits for it. */
    private static void withdraw(Process child) {
        if (!child.isAlive()) {
            return;
        }
        child.destroy();
        try {
            if (!child.waitFor(WITHDRAW_SECONDS, TimeUnit.SECONDS)) {
                child.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
