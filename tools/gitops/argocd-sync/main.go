// argocd-sync syncs a manifest stream to a cluster once with Argo CD's own sync engine
// (github.com/argoproj/gitops-engine pkg/engine, as its agent does): it applies the stream and,
// with --prune, deletes what the app owns in the cluster that the stream no longer has. An
// object is the app's when it carries Argo CD's tracking label app.kubernetes.io/instance=APP;
// the sync puts that label on every object of the stream.
//
// Usage: argocd-sync --kubeconfig FILE --namespace NS --app APP [--prune] < manifests.yaml
//
// Writes one JSON object per resource result on stdout, then {"phase": ..., "message": ...}.
// Exit 0 when the sync succeeded, 1 when it failed or errored, 2 on bad use or input.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/argoproj/gitops-engine/pkg/cache"
	"github.com/argoproj/gitops-engine/pkg/engine"
	"github.com/argoproj/gitops-engine/pkg/sync"
	"github.com/argoproj/gitops-engine/pkg/sync/common"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

const trackingLabel = "app.kubernetes.io/instance"

type result struct {
	Group     string `json:"group"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Status    string `json:"status"`
	Message   string `json:"message"`
	Phase     string `json:"syncPhase"`
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

func targets(in io.Reader, app string) ([]*unstructured.Unstructured, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(in))
	var objs []*unstructured.Unstructured
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		var raw map[string]interface{}
		if err := yaml.Unmarshal(doc, &raw); err != nil {
			return nil, err
		}
		if raw == nil {
			continue
		}
		items, err := expanded(&unstructured.Unstructured{Object: raw})
		if err != nil {
			return nil, err
		}
		for _, obj := range items {
			labels := obj.GetLabels()
			if labels == nil {
				labels = map[string]string{}
			}
			labels[trackingLabel] = app
			obj.SetLabels(labels)
			objs = append(objs, obj)
		}
	}
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file")
	namespace := flag.String("namespace", "default", "namespace of namespaced objects without one")
	app := flag.String("app", "", "the app's name (its tracking label)")
	prune := flag.Bool("prune", false, "delete the app's objects the stream no longer has")
	timeout := flag.Duration("timeout", 90*time.Second, "give up after this long")
	flag.Parse()
	if *kubeconfig == "" || *app == "" {
		fmt.Fprintln(os.Stderr, "argocd-sync: --kubeconfig and --app are required")
		os.Exit(2)
	}
	objs, err := targets(os.Stdin, *app)
	if err != nil {
		fmt.Fprintln(os.Stderr, "argocd-sync: reading manifests:", err)
		os.Exit(2)
	}
	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, "argocd-sync:", err)
		os.Exit(2)
	}
	clusterCache := cache.NewClusterCache(config,
		// The app's own objects are kept whole in the cache: the engine prunes only those.
		cache.SetPopulateResourceInfoHandler(func(un *unstructured.Unstructured, _ bool) (interface{}, bool) {
			app := un.GetLabels()[trackingLabel]
			return app, app != ""
		}),
	)
	gitops := engine.NewEngine(config, clusterCache)
	stop, err := gitops.Run()
	if err != nil {
		fmt.Fprintln(os.Stderr, "argocd-sync: reading the cluster:", err)
		os.Exit(1)
	}
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	owned := func(r *cache.Resource) bool { return r.Info == *app }
	results, syncErr := gitops.Sync(ctx, objs, owned, "rev", *namespace, sync.WithPrune(*prune))
	out := json.NewEncoder(os.Stdout)
	for _, r := range results {
		_ = out.Encode(result{
			Group: r.ResourceKey.Group, Kind: r.ResourceKey.Kind, Namespace: r.ResourceKey.Namespace,
			Name: r.ResourceKey.Name, Status: string(r.Status), Message: r.Message,
			Phase: string(r.SyncPhase),
		})
	}
	phase, message := common.OperationSucceeded, "successfully synced"
	if syncErr != nil {
		phase, message = common.OperationFailed, syncErr.Error()
	}
	for _, r := range results {
		if r.Status != common.ResultCodeSynced && r.Status != common.ResultCodePruned &&
			r.Status != common.ResultCodePruneSkipped {
			phase = common.OperationFailed
		}
	}
	_ = out.Encode(map[string]string{"phase": string(phase), "message": message})
	if phase != common.OperationSucceeded {
		os.Exit(1)
	}
}
