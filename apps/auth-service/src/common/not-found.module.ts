import { All, Controller, Module, UseFilters } from '@nestjs/common';
import { AuthError } from './auth-error.js';
import { AuthErrorFilter } from './auth-error.filter.js';

@Controller('a/:slug')
@UseFilters(AuthErrorFilter)
export class NotFoundController {
  @All('*path')
  notFound(): never {
    throw new AuthError(404, 'NOT_FOUND', 'Not found');
  }
}

/** Registered after every feature, so it only sees paths no feature answers. */
@Module({ controllers: [NotFoundController] })
export class NotFoundModule {}
