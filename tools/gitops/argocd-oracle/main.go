// argocd-oracle classifies every object of a `helm template` stream the way Argo CD does,
// with Argo CD's own sync code (github.com/argoproj/gitops-engine): whether it is a hook,
// its sync phases, its delete policies and its wave. It reads YAML on stdin and writes one
// JSON object per document on stdout, in input order.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/argoproj/gitops-engine/pkg/sync/common"
	"github.com/argoproj/gitops-engine/pkg/sync/hook"
	"github.com/argoproj/gitops-engine/pkg/sync/syncwaves"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

type classification struct {
	Kind           string   `json:"kind"`
	Name           string   `json:"name"`
	Hook           bool     `json:"hook"`
	Phases         []string `json:"phases"`
	DeletePolicies []string `json:"deletePolicies"`
	Wave           int      `json:"wave"`
}

func classify(obj *unstructured.Unstructured) classification {
	c := classification{
		Kind:           obj.GetKind(),
		Name:           obj.GetName(),
		Hook:           hook.IsHook(obj),
		Phases:         []string{},
		DeletePolicies: []string{},
		Wave:           syncwaves.Wave(obj),
	}
	if !c.Hook {
		// Not a hook: Argo CD applies it in the Sync phase (unless annotated Skip).
		if !hook.Skip(obj) {
			c.Phases = append(c.Phases, string(common.SyncPhaseSync))
		}
		return c
	}
	for _, t := range hook.Types(obj) {
		c.Phases = append(c.Phases, string(t))
	}
	for _, p := range hook.DeletePolicies(obj) {
		c.DeletePolicies = append(c.DeletePolicies, string(p))
	}
	// Argo CD de-duplicates both annotations through a Go map (resource.GetAnnotationCSVs),
	// so they come in random order: sets, printed sorted so that runs compare.
	sort.Strings(c.Phases)
	sort.Strings(c.DeletePolicies)
	return c
}

func run(in io.Reader, out io.Writer) error {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(in))
	enc := json.NewEncoder(out)
	for n := 1; ; n++ {
		doc, err := reader.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("document %d: %w", n, err)
		}
		var content map[string]interface{}
		if err := yaml.Unmarshal(doc, &content); err != nil {
			return fmt.Errorf("document %d: %w", n, err)
		}
		if len(content) == 0 { // an empty document (comments only)
			continue
		}
		if err := enc.Encode(classify(&unstructured.Unstructured{Object: content})); err != nil {
			return err
		}
	}
}

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "argocd-oracle:", err)
		os.Exit(2)
	}
}
