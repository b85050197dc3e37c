// flux-helmrelease renders the Flux HelmRelease that installs a chart guarded by
// upgrade-guard, built from helm-controller's own API types, so the CRD policy it writes is
// one helm-controller accepts. It prints YAML on stdout.
//
// The policy decides whether the guard stands in front of CRD changes. helm-controller
// applies `upgrade.crds: Create` or `CreateReplace` to the chart's crds/ directory before the
// upgrade starts, so the pre-upgrade hook finds those CRDs already changed. With `Skip` (the
// default) crds/ is left alone on upgrade and the CRDs the chart ships in templates/ reach
// the cluster only after the pre-upgrade hook has passed.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

func policy(name string) (helmv2.CRDsPolicy, error) {
	for _, p := range []helmv2.CRDsPolicy{helmv2.Skip, helmv2.Create, helmv2.CreateReplace} {
		if string(p) == name {
			return p, nil
		}
	}
	return "", fmt.Errorf("unknown CRD policy %q (Skip, Create or CreateReplace)", name)
}

func main() {
	name := flag.String("name", "", "HelmRelease name")
	namespace := flag.String("namespace", "default", "HelmRelease namespace")
	chart := flag.String("chart", "", "chart name in the source")
	version := flag.String("version", "*", "chart version constraint")
	source := flag.String("source", "", "HelmRepository name")
	installCRDs := flag.String("install-crds", string(helmv2.Create), "install.crds policy")
	upgradeCRDs := flag.String("upgrade-crds", string(helmv2.Skip), "upgrade.crds policy")
	flag.Parse()
	if *name == "" || *chart == "" || *source == "" {
		fmt.Fprintln(os.Stderr, "flux-helmrelease: -name, -chart and -source are required")
		os.Exit(2)
	}
	install, err := policy(*installCRDs)
	if err == nil {
		var upgrade helmv2.CRDsPolicy
		upgrade, err = policy(*upgradeCRDs)
		if err == nil {
			err = render(*name, *namespace, *chart, *version, *source, install, upgrade)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "flux-helmrelease:", err)
		os.Exit(2)
	}
}

func render(name, namespace, chart, version, source string, install, upgrade helmv2.CRDsPolicy) error {
	release := helmv2.HelmRelease{
		TypeMeta:   metav1.TypeMeta{APIVersion: helmv2.GroupVersion.String(), Kind: helmv2.HelmReleaseKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: helmv2.HelmReleaseSpec{
			Interval: metav1.Duration{Duration: 10 * time.Minute},
			Chart: &helmv2.HelmChartTemplate{
				Spec: helmv2.HelmChartTemplateSpec{
					Chart:   chart,
					Version: version,
					SourceRef: helmv2.CrossNamespaceObjectReference{
						Kind: "HelmRepository",
						Name: source,
					},
				},
			},
			Install: &helmv2.Install{CRDs: install},
			Upgrade: &helmv2.Upgrade{CRDs: upgrade},
		},
	}
	out, err := yaml.Marshal(release)
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(out)
	return err
}
