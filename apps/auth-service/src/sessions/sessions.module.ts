import { Module } from '@nestjs/common';
import { SessionReadsFastPath } from './session-reads.fast-path.js';
import { SessionsController } from './sessions.controller.js';

@Module({ controllers: [SessionsController], providers: [SessionReadsFastPath] })
export class SessionsModule {}
