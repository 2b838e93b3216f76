// Dump prints java.util.Properties.load(InputStream) results for the files
// given, one "key" "value" line each, sorted; it produced java_expected.txt
// (run: java Dump.java tricky_*.properties > java_expected.txt, JDK 17).
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
public class Dump {
  static String q(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') b.append('\\').append(c);
      else if (c < 0x20 || c > 0x7e) b.append(String.format("\\u%04x", (int) c));
      else b.append(c);
    }
    return b.append('"').toString();
  }
  public static void main(String[] a) throws Exception {
    for (String f : a) {
      Properties p = new Properties();
      try (InputStream in = Files.newInputStream(Paths.get(f))) { p.load(in); }
      catch (Exception e) { System.out.println(f + " ERROR " + e.getClass().getSimpleName()); continue; }
      TreeMap<String,String> m = new TreeMap<>();
      for (String k : p.stringPropertyNames()) m.put(k, p.getProperty(k));
      System.out.println(f + " OK " + m.size());
      for (Map.Entry<String,String> e : m.entrySet()) System.out.println(q(e.getKey()) + " " + q(e.getValue()));
    }
  }
}
