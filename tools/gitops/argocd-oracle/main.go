// argocd-oracle classifies every object of a `helm template` stream the way Argo CD does,
// with Argo CD's own sync code (github.com/argoproj/gitops-engine): whether it is a hook,
// its sync phases, its delete policies and its wave. It reads YAML on stdin and writes one
// JSON line per object on stdout, in input order (a List's items each, as Argo CD's
// repo-server unpacks them).
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
	"k8s.io/apimachinery/pkg/runtime"
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

// expanded is the object, or a List's items: Argo CD's repo-server unpacks a List
// (reposerver/repository, GenerateManifests) before the sync code sees any object.
func expanded(obj *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	if !obj.IsList() {
		return []*unstructured.Unstructured{obj}, nil
	}
	var items []*unstructured.Unstructured
	err := obj.EachListItem(func(item runtime.Object) error {
		u, ok := item.(*unstructured.Unstructured)
		if !ok {
			return fmt.Errorf("resource list item has unexpected type")
		}
		items = append(items, u)
		return nil
	})
	return items, err
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
		objs, err := expanded(&unstructured.Unstructured{Object: content})
		if err != nil {
			return fmt.Errorf("document %d: %w", n, err)
		}
		for _, obj := range objs {
			if err := enc.Encode(classify(obj)); err != nil {
				return err
			}
		}
	}
}

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "argocd-oracle:", err)
		os.Exit(2)
	}
}
