/*
 * fuzz_common.h — what the libFuzzer targets share: a store with runtimes
 * like deploy/runtimes (and two TrainJobs, for the JobSet route), built once
 * from the text below with no file I/O, and a fixed fake MPI key.
 *
 * Only included by tests/fuzz/fuzz_*.c; every function is static inline.
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/trainpolicy.h"

#define FZ_ASSERT(c)                                                                     \
	do {                                                                             \
		if (!(c)) {                                                              \
			fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__,       \
				__LINE__, #c);                                           \
			abort();                                                         \
		}                                                                        \
	} while (0)

/* deploy/runtimes, condensed, plus an OME runtime and two TrainJobs. */
static const char fz_objects_yaml[] =
	"apiVersion: trainer.kubeflow.org/v1alpha1\n"
	"kind: ClusterTrainingRuntime\n"
	"metadata:\n"
	"  name: torch-distributed\n"
	"  labels: {trainer.kubeflow.org/framework: torch}\n"
	"spec:\n"
	"  mlPolicy: {numNodes: 1, torch: {}}\n"
	"  template:\n"
	"    spec:\n"
	"      replicatedJobs:\n"
	"        - name: dataset-initializer\n"
	"          template:\n"
	"            metadata:\n"
	"              labels: {trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer}\n"
	"            spec:\n"
	"              template:\n"
	"                spec:\n"
	"                  containers:\n"
	"                    - name: dataset-initializer\n"
	"                      image: ghcr.io/kubeflow/trainer/dataset-initializer\n"
	"                      volumeMounts: [{name: initializer, mountPath: /workspace}]\n"
	"                  volumes: [{name: initializer, persistentVolumeClaim: {claimName: initializer}}]\n"
	"        - name: model-initializer\n"
	"          dependsOn: [{name: dataset-initializer, status: Complete}]\n"
	"          template:\n"
	"            metadata:\n"
	"              labels: {trainer.kubeflow.org/trainjob-ancestor-step: model-initializer}\n"
	"            spec:\n"
	"              template:\n"
	"                spec:\n"
	"                  containers:\n"
	"                    - name: model-initializer\n"
	"                      image: ghcr.io/kubeflow/trainer/model-initializer\n"
	"                      volumeMounts: [{name: initializer, mountPath: /workspace}]\n"
	"                  volumes: [{name: initializer, persistentVolumeClaim: {claimName: initializer}}]\n"
	"        - name: node\n"
	"          dependsOn: [{name: model-initializer, status: Complete}]\n"
	"          template:\n"
	"            metadata:\n"
	"              labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}\n"
	"            spec:\n"
	"              template:\n"
	"                spec:\n"
	"                  containers:\n"
	"                    - name: node\n"
	"                      image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime\n"
	"                      volumeMounts: [{name: initializer, mountPath: /workspace}]\n"
	"                  volumes: [{name: initializer, persistentVolumeClaim: {claimName: initializer}}]\n"
	"---\n"
	"apiVersion: trainer.kubeflow.org/v1alpha1\n"
	"kind: ClusterTrainingRuntime\n"
	"metadata:\n"
	"  name: torch-legacy\n"
	"  labels: {trainer.kubeflow.org/framework: torch, trainer.kubeflow.org/support: deprecated}\n"
	"spec:\n"
	"  mlPolicy: {numNodes: 1, torch: {}}\n"
	"  template:\n"
	"    spec:\n"
	"      replicatedJobs:\n"
	"        - name: node\n"
	"          template:\n"
	"            metadata:\n"
	"              labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}\n"
	"            spec:\n"
	"              template:\n"
	"                spec:\n"
	"                  containers:\n"
	"                    - {name: node, image: pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime}\n"
	"---\n"
	"apiVersion: trainer.kubeflow.org/v1alpha1\n"
	"kind: ClusterTrainingRuntime\n"
	"metadata:\n"
	"  name: deepspeed-distributed\n"
	"  labels: {trainer.kubeflow.org/framework: deepspeed}\n"
	"spec:\n"
	"  mlPolicy:\n"
	"    numNodes: 1\n"
	"    mpi: {numProcPerNode: 1, mpiImplementation: OpenMPI, sshAuthMountPath: /home/mpiuser/.ssh, runLauncherAsNode: true}\n"
	"  template:\n"
	"    spec:\n"
	"      network: {publishNotReadyAddresses: true}\n"
	"      successPolicy: {operator: All, targetReplicatedJobs: [launcher]}\n"
	"      replicatedJobs:\n"
	"        - name: launcher\n"
	"          template:\n"
	"            metadata:\n"
	"              labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}\n"
	"            spec:\n"
	"              template:\n"
	"                spec:\n"
	"                  containers:\n"
	"                    - {name: node, image: ghcr.io/kubeflow/trainer/deepspeed-runtime, securityContext: {runAsUser: 1000}}\n"
	"        - name: node\n"
	"          template:\n"
	"            spec:\n"
	"              template:\n"
	"                spec:\n"
	"                  containers:\n"
	"                    - name: node\n"
	"                      image: ghcr.io/kubeflow/trainer/deepspeed-runtime\n"
	"                      securityContext: {runAsUser: 1000}\n"
	"                      command: [/usr/sbin/sshd]\n"
	"                      args: [-De, -f, /home/mpiuser/.sshd_config]\n"
	"---\n"
	"apiVersion: trainer.kubeflow.org/v1alpha1\n"
	"kind: TrainingRuntime\n"
	"metadata:\n"
	"  name: mpi-openmpi\n"
	"  namespace: team-a\n"
	"  labels: {trainer.kubeflow.org/framework: mpi}\n"
	"spec:\n"
	"  mlPolicy:\n"
	"    numNodes: 2\n"
	"    mpi: {numProcPerNode: 2, mpiImplementation: OpenMPI, sshAuthMountPath: /root/.ssh, runLauncherAsNode: false}\n"
	"  podGroupPolicy:\n"
	"    coscheduling: {scheduleTimeoutSeconds: 120}\n"
	"  template:\n"
	"    spec:\n"
	"      replicatedJobs:\n"
	"        - name: launcher\n"
	"          template:\n"
	"            metadata:\n"
	"              labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}\n"
	"            spec:\n"
	"              template:\n"
	"                spec:\n"
	"                  containers:\n"
	"                    - {name: node, image: mpioperator/mpi-pi:openmpi, command: [mpirun, /home/mpiuser/pi]}\n"
	"        - name: node\n"
	"          template:\n"
	"            spec:\n"
	"              template:\n"
	"                spec:\n"
	"                  containers:\n"
	"                    - {name: node, image: mpioperator/mpi-pi:openmpi, command: [/usr/sbin/sshd, -De]}\n"
	"---\n"
	"apiVersion: trainer.kubeflow.org/v1alpha1\n"
	"kind: TrainJob\n"
	"metadata: {name: mnist, namespace: team-a}\n"
	"spec:\n"
	"  runtimeRef: {apiGroup: trainer.kubeflow.org, kind: ClusterTrainingRuntime, name: torch-distributed}\n"
	"  trainer: {image: docker.io/kubeflow/pytorch-mnist:v1, numNodes: 2}\n"
	"---\n"
	"apiVersion: trainer.kubeflow.org/v1alpha1\n"
	"kind: TrainJob\n"
	"metadata: {name: pi, namespace: team-a}\n"
	"spec:\n"
	"  runtimeRef: {apiGroup: trainer.kubeflow.org, kind: TrainingRuntime, name: mpi-openmpi}\n"
	"  trainer: {numNodes: 3}\n";

/* The first n objects of fz_objects_yaml (all when n is 0), in a new store.
 * Aborts on any failure: the fuzzers cannot run without it. */
static inline tp_store *fz_store_new(size_t n)
{
	tp_json_init();
	tp_docs *docs = NULL;
	tp_load_error err = { 0 };
	tp_store *s = NULL;
	FZ_ASSERT(tp_load(fz_objects_yaml, sizeof(fz_objects_yaml) - 1, NULL, &docs, &err) ==
		  TP_OK);
	FZ_ASSERT(tp_store_new(&s) == TP_OK);
	size_t count = tp_docs_count(docs);
	if (n && n < count)
		count = n;
	for (size_t i = 0; i < count; i++)
		FZ_ASSERT(tp_store_put(s, tp_docs_take(docs, i)) == TP_OK);
	tp_docs_free(docs);
	return s;
}

/* Fixed fake keys: the library only embeds them, it never checks them. */
static const tp_ssh_key fz_ssh_key = {
	"-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n",
	"ecdsa-sha2-nistp521 AAAAE2 fuzz",
};
static const tp_curve_key fz_curve_key = { { 1 }, { 2 } };
static const tp_keys fz_keys = { &fz_ssh_key, &fz_curve_key };

#endif /* FUZZ_COMMON_H */
