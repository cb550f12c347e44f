/** The dashboard API's answers: the one definition in libs/contract, under the names the pages use. */
export type {
  ApplicationDetails,
  ApplicationSummary,
  BackupView as Backup,
  CredentialView as Credential,
  DatabaseBackupsView as DatabaseBackups,
  DatabaseInfo,
  DeploymentRow,
  DeploymentTaskView as DeploymentTask,
  DomainView as Domain,
  FindingView as Finding,
  OutboxEmailView as OutboxEmail,
  OwnerView as Owner,
  ReleaseView as Release,
  RestoreStatus,
  RestoreView as Restore,
  ApplicationStorageView,
  SignInInfo,
  SignInServiceView,
  SignInUserView as SignInUser,
} from '@slipway/contract';
import type { DeploymentTaskView } from '@slipway/contract';

export type Step = DeploymentTaskView['steps'][number];
