// Command goyaml times Kubernetes' own readers on files held in memory, for
// tools/bench_readers.py: YAML as sigs.k8s.io/yaml reads it (go-yaml v2, then JSON: what
// kubectl, helm and the apiserver do), each document of a stream split where
// k8s.io/apimachinery's YAMLReader splits it; JSON (a file named *.json) with encoding/json.
// Each value is decoded into interface{}, as a client that knows no types does.
//
// Usage: goyaml RUNS FILE...   prints {"median_s": S, "documents": N} on standard output.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

type input struct {
	name string
	data []byte
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: goyaml RUNS FILE...")
		os.Exit(2)
	}
	runs, err := strconv.Atoi(os.Args[1])
	if err != nil || runs < 1 {
		fmt.Fprintln(os.Stderr, "goyaml: RUNS must be a positive number")
		os.Exit(2)
	}
	var inputs []input
	for _, name := range os.Args[2:] {
		data, err := os.ReadFile(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, "goyaml:", err)
			os.Exit(2)
		}
		inputs = append(inputs, input{name, data})
	}
	var times []float64
	documents := 0
	for run := 0; run < runs; run++ {
		start := time.Now()
		documents = 0
		for _, in := range inputs {
			n, err := read(in)
			if err != nil {
				fmt.Fprintf(os.Stderr, "goyaml: %s: %v\n", in.name, err)
				os.Exit(2)
			}
			documents += n
		}
		times = append(times, time.Since(start).Seconds())
	}
	sort.Float64s(times)
	fmt.Printf("{\"median_s\": %g, \"documents\": %d}\n", times[len(times)/2], documents)
}

func read(in input) (int, error) {
	if strings.HasSuffix(in.name, ".json") {
		var value interface{}
		return 1, json.Unmarshal(in.data, &value)
	}
	n := 0
	for _, document := range documentsOf(in.data) {
		if len(bytes.TrimSpace(document)) == 0 {
			continue
		}
		var value interface{}
		if err := yaml.Unmarshal(document, &value); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// documentsOf splits a stream as YAMLReader.Read does: at a line starting with "---" that
// holds nothing else but white space or a comment.
func documentsOf(data []byte) [][]byte {
	var documents [][]byte
	start := 0
	for at := 0; at < len(data); {
		end := bytes.IndexByte(data[at:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += at + 1
		}
		line := data[at:end]
		if bytes.HasPrefix(line, []byte("---")) {
			rest := bytes.TrimSpace(line[3:])
			if len(rest) == 0 || rest[0] == '#' {
				documents = append(documents, data[start:at])
				start = end
			}
		}
		at = end
	}
	return append(documents, data[start:])
}
