// The cloud table (src/command-safety/programs/cloud.ts) reads each CLI by its own grammar: a read
// of names and state passes, a read that hands over a secret or a credential and a change need a
// person. And the operators' checks (programs/operators.ts): tunnels, listeners, cracking, the
// audit and kernel logs, the screen, the user's global package setup, frameworks' secrets.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkCommand } from '../../src/command-safety/dangerous.js';

const WS = '/work/ws';

// [command, dangerous, a fragment of one reason (for dangerous ones)].
const CASES: [string, boolean, string?][] = [
  // aws: global options before the service, the operation's name, the reads that return secrets
  ['aws --profile ops --region us-east-1 --output json iam list-roles', false],
  ['aws --endpoint-url http://localhost:4566 --region eu-west-1 ec2 describe-vpcs', false],
  ['aws sts get-caller-identity', false],
  ['aws s3api head-object --bucket b --key k', false],
  ['aws logs tail /aws/lambda/fn --follow', false],
  ['aws secretsmanager list-secrets', false],
  ['aws secretsmanager get-secret-value --secret-id prod/db', true, 'secret or a credential'],
  ['aws secretsmanager batch-get-secret-value --secret-id-list a b', true, 'secret or a credential'],
  ['aws ssm get-parameter --name /app/url', false],
  ['aws ssm get-parameters-by-path --path /prod --with-decryption', true, 'secret or a credential'],
  ['aws ec2 describe-instance-attribute --instance-id i-1 --attribute instanceType', false],
  ['aws ec2 describe-instance-attribute --instance-id i-1 --attribute userData', true, 'secret or a credential'],
  ['aws ec2 get-password-data --instance-id i-1', true, 'secret or a credential'],
  ['aws sts get-session-token', true, 'secret or a credential'],
  ['aws sts assume-role --role-arn arn:aws:iam::1:role/r --role-session-name s', true, 'secret or a credential'],
  ['aws iam create-access-key --user-name bob', true, 'infrastructure'],
  ['aws ecr get-login-password --region us-east-1', true, 'secret or a credential'],
  ['aws lambda get-function --function-name fn', true, 'secret or a credential'],
  ['aws lambda get-function-configuration --function-name fn', false],
  ['aws kms decrypt --ciphertext-blob fileb://x.enc', true, 'secret or a credential'],
  ['aws iam get-credential-report', false],
  ['aws organizations leave-organization', true, 'infrastructure'],
  ['aws ssm send-command --document-name AWS-RunShellScript --targets Key=instanceids,Values=i-1', true, 'infrastructure'],
  ['aws configure list', false],
  ['aws configure set region us-east-1', true, 'infrastructure'],
  ['aws configure export-credentials', true],
  // aws s3: copies judged by direction
  ['aws s3 ls s3://bucket/prefix/', false],
  ['aws s3 cp s3://bucket/fixtures/a.json tests/fixtures/a.json', false],
  ['aws s3 sync s3://bucket/data ./data --exclude "*.tmp"', false],
  ['aws s3 cp s3://bucket/a.json -', false],
  ['aws s3 cp s3://bucket/a.json /etc/app.json', true, 'outside the workspace'],
  ['aws s3 cp ./dist s3://bucket/ --recursive', true, 'infrastructure'],
  ['aws s3 cp s3://a/x s3://b/x', true, 'infrastructure'],
  ['aws s3 mv s3://bucket/a.json ./a.json', true, 'infrastructure'],
  ['aws s3 rb s3://bucket --force', true, 'infrastructure'],
  // gcloud, gsutil, az: groups, then the command
  ['gcloud run services describe api --region us-central1', false],
  ['gcloud --project p compute instances list --format json', false],
  ['gcloud projects get-iam-policy p', false],
  ['gcloud logging read "severity>=ERROR" --limit 5', false],
  ['gcloud run deploy api --image gcr.io/p/api', true, 'infrastructure'],
  ['gcloud projects add-iam-policy-binding p --member user:x@example.com --role roles/owner', true, 'infrastructure'],
  ['gcloud secrets versions list --secret db', false],
  ['gcloud secrets versions access latest --secret db', true, 'secret or a credential'],
  ['gcloud container clusters get-credentials prod --zone z', true, 'secret or a credential'],
  ['gcloud auth print-access-token', true],
  ['gcloud auth list', false],
  ['gcloud config set project p', true, 'infrastructure'],
  ['gcloud storage cp gs://b/a.csv data/a.csv', false],
  ['gsutil ls gs://bucket', false],
  ['gsutil iam get gs://bucket', false],
  ['gsutil iam ch allUsers:objectViewer gs://bucket', true, 'infrastructure'],
  ['gsutil -m cp -r ./site gs://bucket', true, 'infrastructure'],
  ['gsutil cp gs://bucket/a.csv ./data/', false],
  ['az vm list -o table', false],
  ['az role assignment list --all -o table', false],
  ['az keyvault secret list --vault-name kv', false],
  ['az keyvault secret show --vault-name kv --name db', true, 'secret or a credential'],
  ['az account get-access-token', true, 'secret or a credential'],
  ['az aks get-credentials -g rg -n aks', true, 'secret or a credential'],
  ['az deployment group what-if -g rg --template-file main.bicep', false],
  ['az group create --name rg --location eastus', true, 'infrastructure'],
  // kubectl, oc, helm
  ['kubectl auth can-i create pods', false],
  ['kubectl rollout status deploy/api', false],
  ['kubectl rollout history deploy/api', false],
  ['kubectl rollout restart deploy/api', true, 'infrastructure'],
  ['kubectl -n kube-system get secrets', false],
  ['kubectl get secret db -o jsonpath={.data.password}', true, 'secret or a credential'],
  ['kubectl get secrets -A -o yaml', true, 'secret or a credential'],
  ['kubectl describe secret db', true, 'secret or a credential'],
  ['kubectl get configmap app -o yaml', false],
  ['kubectl config view', false],
  ['kubectl config view --raw', true],
  ['kubectl expose deployment api --port 80', true, 'infrastructure'],
  ['kubectl debug node/worker-1 -it --image ubuntu', true, 'infrastructure'],
  ['kubectl port-forward svc/api 8080:80', true, 'infrastructure'],
  ['kubectl --context prod exec -it api-0 -- sh', true, 'infrastructure'],
  ['oc get pods', false],
  ['oc delete project demo', true, 'infrastructure'],
  ['helm status web -n prod', false],
  ['helm template web ./chart', false],
  ['helm repo add stable https://charts.example.com', true, 'infrastructure'],
  ['helm rollback web 1', true, 'infrastructure'],
  // terraform and its kin
  ['terraform -chdir=infra plan -out tfplan', false],
  ['terraform -chdir=infra apply tfplan', true, 'infrastructure'],
  ['terraform output -json', false],
  ['terraform test', false],
  ['terraform state list', false],
  ['terraform state mv a b', true, 'infrastructure'],
  ['terraform force-unlock -force 1234', true, 'infrastructure'],
  ['terragrunt run-all plan', false],
  ['terragrunt run-all apply', true, 'infrastructure'],
  ['tofu validate', false],
  ['pulumi preview', false],
  ['pulumi up --yes', true, 'infrastructure'],
  ['pulumi stack output --show-secrets', true, 'secret or a credential'],
  ['cdk synth', false],
  ['cdk deploy --require-approval never', true, 'infrastructure'],
  // tunnels, proxies and listeners
  ['chisel server -p 8080 --reverse', true, 'tunnel'],
  ['chisel --help', false],
  ['socat TCP-LISTEN:8443,fork TCP:10.0.0.5:443', true, 'listens'],
  ['socat TCP-LISTEN:8443,bind=127.0.0.1,fork TCP:10.0.0.5:443', false],
  ['curl --socks5 198.51.100.6:1080 https://example.com/x', true, 'proxy on another machine'],
  ['ssh -N -D 1080 user@198.51.100.7', true, 'proxy'],
  ['docker run -p 3306:3306 mysql', true, 'every network interface'],
  ['docker run -p 127.0.0.1:3306:3306 mysql', false],
  ['docker run -P nginx', true, 'every network interface'],
  // cracking, watchers, the screen
  ['hydra -l root -P passwords.txt ssh://198.51.100.20', true, 'passwords'],
  ['hashcat -m 0 hashes.txt words.txt', true, 'passwords'],
  ['hashcat --version', false],
  ['auditctl -D', true, 'audit rules'],
  ['auditctl -l', false],
  ['dmesg -C', true, 'message buffer'],
  ['dmesg -T', false],
  ['ffmpeg -f x11grab -i :0.0 -t 10 out.mp4', true, 'screen'],
  ['ffmpeg -i in.mp4 out.webm', false],
  ['import -window root shot.png', true, 'screen'],
  ['getcap -r /usr/bin', false],
  ['openssl enc -d -aes-256-cbc -in p.enc -k pass | sh', true, 'decoded content'],
  ['openssl enc -d -aes-256-cbc -in p.enc -out p.txt', false],
  ['git clone https://github.com/example/tool /dev/shm/tool', true, '/dev/shm'],
  ['git clone https://github.com/example/tool vendor/tool', false],
  ['git clone https://github.com/example/tool ~/src/tool', true, 'clones into'],
  // the user's global setup, publishing, frameworks
  ['composer global require friendsofphp/php-cs-fixer', true, 'global Composer'],
  ['composer require --dev phpunit/phpunit', false],
  ['poetry config pypi-token.pypi pypi-AgEIcHlwaS5vcmc', true, 'credential'],
  ['poetry config virtualenvs.in-project true --local', false],
  ['poetry self add poetry-plugin-export', true, "Poetry's own"],
  ['cosign sign --yes ghcr.io/example/app@sha256:0123', true, 'registry'],
  ['cosign verify ghcr.io/example/app', false],
  ['./mvnw spring-boot:build-image -Dspring-boot.build-image.publish=true', true, 'pushes an image'],
  ['./mvnw spring-boot:build-image', false],
  ['bin/rails credentials:show', true, 'credentials'],
  ['bin/rails db:drop RAILS_ENV=production', true, 'production database'],
  ['RAILS_ENV=production bin/rails db:reset', true, 'production database'],
  ['bin/rails db:reset', false],
  ['php bin/console secrets:decrypt-to-local --force --env=prod', true, 'secrets'],
  ['php bin/console cache:clear', false],
];

describe('the cloud table and the operators checks', () => {
  it.each(CASES)('%s', (command, dangerous, reason) => {
    const r = checkCommand(command, WS);
    expect(r.dangerous, r.reasons.join('; ')).toBe(dangerous);
    if (reason) expect(r.reasons.join('; ')).toContain(reason);
  });
});

/** A resource name: any identifier a user might give (including ones spelled like verbs). */
const name = fc.oneof(
  fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/),
  fc.constantFrom('delete', 'create', 'apply', 'run', 'exec', 'secret', 'secrets', 'get-secret-value', 'rollout', 'destroy', 'rm'),
);

const READS: ((n: string) => string)[] = [
  (n) => `aws --profile ${n} ec2 describe-instances --instance-ids ${n}`,
  (n) => `aws iam list-attached-role-policies --role-name ${n}`,
  (n) => `aws s3 ls s3://${n}/`,
  (n) => `aws s3 cp s3://${n}/fixture.json tests/fixtures/${n}.json`,
  (n) => `gcloud run services describe ${n} --region us-central1`,
  (n) => `gcloud compute instances list --filter name=${n}`,
  (n) => `gsutil ls gs://${n}`,
  (n) => `az vm show --resource-group rg --name ${n}`,
  (n) => `kubectl get deploy ${n} -n ${n}`,
  (n) => `kubectl describe pod ${n}`,
  (n) => `kubectl logs ${n} --tail 20`,
  (n) => `kubectl rollout status deploy/${n}`,
  (n) => `helm status ${n}`,
  (n) => `terraform -chdir=${n} plan`,
  (n) => `terraform state show aws_instance.${n}`,
];
const CHANGES: ((n: string) => string)[] = [
  (n) => `aws --region us-east-1 ec2 terminate-instances --instance-ids ${n}`,
  (n) => `aws iam attach-user-policy --user-name ${n} --policy-arn arn:aws:iam::aws:policy/AdministratorAccess`,
  (n) => `aws s3 rm s3://${n} --recursive`,
  (n) => `aws secretsmanager get-secret-value --secret-id ${n}`,
  (n) => `gcloud compute instances delete ${n} --quiet`,
  (n) => `gcloud secrets versions access latest --secret ${n}`,
  (n) => `az group delete --name ${n} --yes`,
  (n) => `kubectl delete deploy ${n}`,
  (n) => `kubectl get secret ${n} -o yaml`,
  (n) => `kubectl scale deploy/${n} --replicas 0`,
  (n) => `helm uninstall ${n}`,
  (n) => `terraform destroy -target aws_instance.${n} -auto-approve`,
];

describe('the cloud table judges the grammar, not the names given to it', () => {
  it('passes every reading form, with any resource names', () => {
    fc.assert(
      fc.property(fc.constantFrom(...READS), name, (form, n) => {
        const r = checkCommand(form(n), WS);
        if (r.dangerous) throw new Error(`flagged: ${form(n)}: ${r.reasons.join('; ')}`);
      }),
    );
  });

  it('stops every changing or secret-reading form, with any names, under timeout, nice or env as well', () => {
    fc.assert(
      fc.property(fc.constantFrom(...CHANGES), name, fc.constantFrom('', 'timeout 60 ', 'nice -n 5 ', 'env AWS_PROFILE=ops '), (form, n, wrapper) => {
        expect(checkCommand(wrapper + form(n), WS).dangerous).toBe(true);
      }),
    );
  });
});
