import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.deidentifier.arx.ARXAnonymizer;
import org.deidentifier.arx.ARXConfiguration;
import org.deidentifier.arx.ARXConfiguration.AnonymizationAlgorithm;
import org.deidentifier.arx.ARXLattice.ARXNode;
import org.deidentifier.arx.ARXResult;
import org.deidentifier.arx.AttributeType.Hierarchy;
import org.deidentifier.arx.Data;
import org.deidentifier.arx.DataHandle;
import org.deidentifier.arx.criteria.KAnonymity;
import org.deidentifier.arx.io.CSVHierarchyInput;
import org.deidentifier.arx.metric.Metric;

/**
 * ARX's heuristic searches, driven over a pipe by benchmarks/bench_heuristic.py (ARX's public
 * API only; built against the ARX 3.9 classes of ../shared/tools/arx-bench).
 *
 * One JVM serves many runs: "READY", then per input line of options one RESULT line.
 * Options: --data FILE --prefix NAME (every NAME_hierarchy_ATTR.csv beside FILE makes ATTR a
 * QI, as ARX's AbstractAnonymizationTest does), --k K --supp LIMIT, --metric loss|entropy-nm
 * with --gs FACTOR (Loss's gsFactor), --algorithm lightning|topdown|genetic, --steplimit N,
 * --timelimit MS, --deterministic 1 (the genetic algorithm's fixed seed, as ARX's tests run it).
 * The metrics are those of ARX's heuristic tests: Metric.createLossMetric(gs) and
 * Metric.createPrecomputedEntropyMetric(0.1, false) (non-monotone non-uniform entropy).
 * RESULT: wall ms of anonymize(), the process's and the calling thread's CPU ms in it, the
 * optimum's levels and score, the nodes ARX marks checked.
 */
public class ArxHeuristic {

    static Data data;
    static String loadedKey;
    static ARXResult last;
    static final ARXAnonymizer ANONYMIZER = new ARXAnonymizer();
    static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    static Map<String, String> parse(String[] args) {
        Map<String, String> o = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) o.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        return o;
    }

    static void load(Map<String, String> o) throws Exception {
        String file = o.get("data");
        String prefix = o.get("prefix");
        String key = file + "|" + prefix;
        if (Objects.equals(key, loadedKey)) return;
        data = Data.create(file, StandardCharsets.UTF_8, ';');
        File dir = new File(file).getAbsoluteFile().getParentFile();
        File[] files = dir.listFiles((d, n) -> n.matches(Pattern.quote(prefix) + "_hierarchy_(.)+.csv"));
        Arrays.sort(files);
        Pattern p = Pattern.compile("_hierarchy_(.*?).csv");
        for (File f : files) {
            Matcher m = p.matcher(f.getName());
            if (!m.find()) continue;
            Hierarchy h = Hierarchy.create(new CSVHierarchyInput(f, StandardCharsets.UTF_8, ';').getHierarchy());
            data.getDefinition().setAttributeType(m.group(1), h);
        }
        loadedKey = key;
        last = null;
    }

    static String run(Map<String, String> o) throws Exception {
        load(o);
        double supp = Double.parseDouble(o.getOrDefault("supp", "0.05"));
        String metric = o.getOrDefault("metric", "loss");
        Metric<?> quality;
        if (metric.equals("loss")) quality = Metric.createLossMetric(Double.parseDouble(o.getOrDefault("gs", "0.5")));
        else if (metric.equals("entropy-nm")) quality = Metric.createPrecomputedEntropyMetric(0.1d, false);
        else throw new IllegalArgumentException("metric " + metric);
        ARXConfiguration config = ARXConfiguration.create(supp, quality);
        config.addPrivacyModel(new KAnonymity(Integer.parseInt(o.getOrDefault("k", "5"))));
        String algorithm = o.getOrDefault("algorithm", "lightning");
        switch (algorithm) {
            case "lightning": config.setAlgorithm(AnonymizationAlgorithm.BEST_EFFORT_BOTTOM_UP); break;
            case "topdown": config.setAlgorithm(AnonymizationAlgorithm.BEST_EFFORT_TOP_DOWN); break;
            case "genetic": config.setAlgorithm(AnonymizationAlgorithm.BEST_EFFORT_GENETIC); break;
            default: throw new IllegalArgumentException("algorithm " + algorithm);
        }
        config.setGeneticAlgorithmDeterministic(o.getOrDefault("deterministic", "0").equals("1"));
        config.setHeuristicSearchTimeLimit(Integer.parseInt(o.getOrDefault("timelimit", String.valueOf(Integer.MAX_VALUE))));
        config.setHeuristicSearchStepLimit(Integer.parseInt(o.getOrDefault("steplimit", String.valueOf(Integer.MAX_VALUE))));
        if (last != null) data.getHandle().release();
        long c0 = OS.getProcessCpuTime();
        long t0 = System.nanoTime();
        last = ANONYMIZER.anonymize(data, config);
        double ms = (System.nanoTime() - t0) / 1e6;
        double cpu = (OS.getProcessCpuTime() - c0) / 1e6;
        ARXNode opt = last.getGlobalOptimum();
        DataHandle in = data.getHandle();
        StringBuilder levels = new StringBuilder("[");
        for (int c = 0; c < in.getNumColumns(); c++) {
            String a = in.getAttributeName(c);
            if (data.getDefinition().getQuasiIdentifyingAttributes().contains(a)) {
                if (levels.length() > 1) levels.append(",");
                levels.append(opt == null ? "-" : String.valueOf(opt.getGeneralization(a)));
            }
        }
        levels.append("]");
        int checked = 0;
        for (ARXNode[] lvl : last.getLattice().getLevels()) for (ARXNode n : lvl) if (n.isChecked()) checked++;
        return String.format("RESULT ms=%.3f cpu_ms=%.3f levels=%s score=%s checked=%d", ms, cpu, levels,
                opt == null ? "none" : opt.getLowestScore().toString(), checked);
    }

    public static void main(String[] args) throws Exception {
        BufferedReader r = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        System.out.println("READY");
        System.out.flush();
        for (String line; (line = r.readLine()) != null; ) {
            line = line.trim();
            if (line.isEmpty()) continue;
            if (line.equals("quit")) break;
            try {
                System.out.println(run(parse(line.split("\\s+"))));
            } catch (Exception e) {
                System.out.println("ERROR " + e);
            }
            System.out.flush();
        }
    }
}
